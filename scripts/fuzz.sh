#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, clang, ASan+UBSan) in build-fuzz if needed and runs every
# one for SECONDS (default 60) with its seed corpus; fails on any crash, leak, timeout or
# out-of-memory. Prints, per target, the executions and the coverage (cov = edges, ft = features,
# from libFuzzer's final status line). Targets run FUZZ_PARALLEL at a time (default: nproc).
# Inputs libFuzzer finds interesting are kept in build-fuzz/fuzz/corpus/<target> between runs;
# a crashing input is written to build-fuzz/fuzz/artifacts/ and its log printed.
#   bash scripts/fuzz.sh [SECONDS] [TARGET...]
#   FUZZ_BUILD_ONLY=1 bash scripts/fuzz.sh      (builds the targets, runs none)
#   FUZZ_OPT=-O0 bash scripts/fuzz.sh 15        (optimisation level, default -O1; see fuzz/README.md)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
if ! [[ $seconds =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: scripts/fuzz.sh [SECONDS >= 1] [TARGET...]" >&2
  exit 2
fi
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(rpc winreg session npa perfdata capture lodctr names config pcap replay auth admin epm client import admission)
parallel=${FUZZ_PARALLEL:-$(nproc)}
dir=build-fuzz
work=$dir/fuzz

# -O1 with line tables only: stack traces keep file:line, and the build costs ~20% less CPU than -O2 -g.
cmake -S . -B $dir -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="${FUZZ_OPT:--O1} -gline-tables-only" -DPERFSIM_WERROR=ON -DPERFSIM_FUZZ=ON \
  -DPERFSIM_TESTS=OFF -DPERFSIM_BENCH=OFF -DCMAKE_UNITY_BUILD=ON >/dev/null
cmake --build $dir -j "$(nproc)" --target fuzz
# scripts/test.sh builds the targets beside the sanitizer suite, then runs them in a stage of their own.
[ "${FUZZ_BUILD_ONLY:-0}" = 1 ] && exit 0

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# Leaks inside GSSAPI's libraries (fuzz_seeds and fuzz_client make credentials), each with its reason.
export LSAN_OPTIONS=suppressions=$PWD/fuzz/lsan-suppressions.txt

rm -rf $work/seeds $work/logs
mkdir -p $work/seeds $work/logs $work/artifacts
$work/fuzz_seeds $work/seeds

run() {
  local t=$1 corpus=$work/corpus/$1
  mkdir -p "$corpus"
  # libFuzzer stops at a directory that does not exist: a target's seeds may come from fuzz_seeds,
  # from fuzz/regressions, or both (fuzz_import's only from regressions).
  local dirs=("$corpus")
  [ -d "$work/seeds/$t" ] && dirs+=("$work/seeds/$t")
  [ -d fuzz/regressions/$t ] && dirs+=(fuzz/regressions/$t)
  # fuzz_client acquires a GSSAPI credential per input and gss-ntlmssp keeps an OpenSSL context
  # from each (fuzz/lsan-suppressions.txt): libFuzzer's leak check after every such input would
  # scan the heap each time (8 instead of ~80 inputs/s). LeakSanitizer's check at exit still runs.
  local extra=()
  [ "$t" = client ] && extra=(-detect_leaks=0)
  # -timeout: one input taking this long is a hang; -rss_limit_mb: more than this is a leak or an
  # unbounded allocation (libFuzzer also refuses any single malloc above it).
  if "$work/fuzz_$t" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 "${extra[@]}" \
    -artifact_prefix="$work/artifacts/$t-" "${dirs[@]}" >"$work/logs/$t.log" 2>&1; then
    echo ok >"$work/logs/$t.result"
  else
    echo FAILED >"$work/logs/$t.result"
  fi
}
running=0
for t in "${targets[@]}"; do
  run "$t" &
  running=$((running + 1))
  if [ $running -ge "$parallel" ]; then
    wait -n
    running=$((running - 1))
  fi
done
wait

failed=0
printf '%-10s %12s %8s %8s %8s  %s\n' target executions cov ft corpus result
for t in "${targets[@]}"; do
  log=$work/logs/$t.log
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  status=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$status")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$status")
  corp=$(sed -n 's/.* corp: \([0-9]*\)\/.*/\1/p' <<<"$status")
  result=$(cat "$work/logs/$t.result")
  printf '%-10s %12s %8s %8s %8s  %s\n' "$t" "${execs:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$result"
  if [ "$result" != ok ]; then
    failed=1
    echo "---- $log (tail)"
    tail -60 "$log"
  fi
done
exit $failed
