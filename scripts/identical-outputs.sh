#!/usr/bin/env bash
# Writes everything perfsim makes that a refactoring must leave byte-identical into OUTDIR: every
# profile's synth capture (and one with roles, one in format v1), the bundled captures remade,
# inspect/dump/validate of each bundled capture, and the raw answers of a recorded collector
# session (scripts/answers.py) served from each bundled capture under its own fingerprint and
# under a few quirk profiles, on a frozen timeline. Run it with the build before and after a
# change and compare: `diff -r BEFORE AFTER` must print nothing.
#   usage: scripts/identical-outputs.sh path/to/perfsim OUTDIR
set -euo pipefail
perfsim=$(realpath "$1")
out=$2
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"

for profile in $("$perfsim" synth --help | sed -n 's/.*OS profile (\([^)]*\)).*/\1/p' | tr -d ,); do
  "$perfsim" synth --profile "$profile" --seed 7 --duration 120 --interval 15 --out "$out/synth-$profile.perfcap" >/dev/null
done
"$perfsim" synth --profile 2016 --role iis --role mssql --role dc --role dotnet --role hyperv --seed 3 \
  --duration 60 --out "$out/synth-2016-roles.perfcap" >/dev/null
"$perfsim" synth --profile 2003 --seed 5 --duration 60 --format-version 1 --out "$out/synth-2003-v1.perfcap" >/dev/null

for profile in win2000 2003 2008r2 2016 2022; do
  cap="$root/captures/default-$profile.perfcap"
  "$perfsim" synth --profile "$profile" --seed 1 --host-name "PERFSIM-$(echo "$profile" | tr a-z A-Z)" \
    --duration 300 --interval 15 --out "$out/bundled-$profile.perfcap" >/dev/null
  cmp "$cap" "$out/bundled-$profile.perfcap" || echo "bundled $profile differs from captures/"
  "$perfsim" inspect "$cap" --json >"$out/inspect-$profile.json"
  "$perfsim" dump "$cap" --sample 3 --json >"$out/dump-$profile.json"
  "$perfsim" validate "$cap" --json >"$out/validate-$profile.json" || true
done

serve_answers() {  # name, then serve arguments
  local name=$1
  shift
  local log="$out/serve-$name.log"
  "$perfsim" serve --listen 127.0.0.1:0 --timeline frozen:2 --json "$@" >"$log" 2>&1 &
  local pid=$!
  local port=""
  for _ in $(seq 100); do
    port=$(sed -n 's/.*"port":\([0-9]*\).*/\1/p' "$log" | head -1)
    [ -n "$port" ] && break
    sleep 0.1
  done
  [ -n "$port" ] || { cat "$log"; kill $pid; return 1; }
  /usr/bin/python3 "$root/scripts/answers.py" --port "$port" >"$out/answers-$name.jsonl"
  kill $pid
  wait $pid || true
  rm -f "$log"
}
for profile in win2000 2003 2008r2 2016 2022; do
  serve_answers "$profile" --capture "$root/captures/default-$profile.perfcap"
done
for profile in nt4 win2000 2022 samba; do
  serve_answers "2016-as-$profile" --capture "$root/captures/default-2016.perfcap" --profile "$profile"
done
serve_answers "2016-content" --capture "$root/captures/default-2016.perfcap" \
  --quirk duplicate-counter-defs --quirk duplicate-instances --quirk name-table-gaps --quirk perffreq \
  --quirk object-count-lies --quirk localized-partial
echo "outputs in $out"
