#!/usr/bin/env bash
# Hunts the suite's races before CI does (issue 55): runs the whole suite of each build several
# times in a row, under CPU contention (stress-ng on every core), with more tests at once than
# cores and in a random order, and lists every case that failed in any run, with its output.
# A case listed here is a bug in the test or the product: fix it; never retry it to make it pass.
#
#   scripts/flake-hunt.sh [--runs N] [--jobs J] [--no-stress] [--filter REGEX] [BUILD_DIR ...]
#     BUILD_DIR  built trees to run (default: build build-asan, those that exist)
#     --runs     runs per tree (default 3)
#     --jobs     ctest -j (default: twice the cores)
#     --no-stress  without stress-ng beside the suite
#     --filter   only cases matching REGEX (ctest -R)
# Writes flake-hunt/<tree>-run<K>.log and flake-hunt/report.txt; exits 1 when any case failed.
# Needs stress-ng (Debian package stress-ng) unless --no-stress. Takes a while: each run of the
# normal suite takes ~5 min on 2 cores and the sanitizer suite ~12 min, more under contention.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '7,12p' "$0" >&2; exit 2; }
runs=3
jobs=$(($(nproc) * 2))
stress=1
filter=()
trees=()
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) [ $# -ge 2 ] || usage; runs=$2; shift 2 ;;
    --jobs) [ $# -ge 2 ] || usage; jobs=$2; shift 2 ;;
    --no-stress) stress=0; shift ;;
    --filter) [ $# -ge 2 ] || usage; filter=(-R "$2"); shift 2 ;;
    -h|--help) usage ;;
    -*) echo "flake-hunt: unknown option '$1'" >&2; usage ;;
    *) trees+=("$1"); shift ;;
  esac
done
case "$runs$jobs" in *[!0-9]*) echo "flake-hunt: --runs and --jobs take whole numbers, e.g. --runs 3 --jobs 4" >&2; exit 2 ;; esac
if [ ${#trees[@]} -eq 0 ]; then
  for t in build build-asan; do [ -f "$t/CTestTestfile.cmake" ] && trees+=("$t"); done
fi
[ ${#trees[@]} -gt 0 ] || { echo "flake-hunt: no built tree (build scripts/test.sh's build or build-asan first)" >&2; exit 2; }
if [ "$stress" -eq 1 ] && ! command -v stress-ng >/dev/null; then
  echo "flake-hunt: stress-ng is not installed (apt-get install stress-ng), or pass --no-stress" >&2
  exit 2
fi

out=flake-hunt
mkdir -p "$out"
report=$out/report.txt
: >"$report"
stress_pid=
cleanup() { [ -z "$stress_pid" ] || kill "$stress_pid" 2>/dev/null || true; }
trap cleanup EXIT
if [ "$stress" -eq 1 ]; then
  # Every core busy at a lower priority than the suite: the tests get CPU later, not never.
  nice -n 10 stress-ng --cpu "$(nproc)" --quiet >/dev/null 2>&1 &
  stress_pid=$!
fi

failed_any=0
total_cases=0
for tree in "${trees[@]}"; do
  for k in $(seq 1 "$runs"); do
    log=$out/$(basename "$tree")-run$k.log
    start=$SECONDS
    rc=0
    env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      ctest --test-dir "$tree" --output-on-failure --schedule-random -j "$jobs" "${filter[@]}" >"$log" 2>&1 || rc=$?
    cases=$(grep -cE 'Test +#[0-9]+: ' "$log" || true)
    total_cases=$((total_cases + cases))
    failures=$(grep -E '^\s*[0-9]+ - .*\((Failed|Timeout|SEGFAULT|Subprocess aborted|Exception|Not Run)\)' "$log" || true)
    printf '%s run %d: %d cases, exit %d, %d s\n' "$tree" "$k" "$cases" "$rc" $((SECONDS - start)) | tee -a "$report"
    if [ -n "$failures" ]; then
      failed_any=1
      printf '%s\n' "$failures" | sed 's/^/  FAILED /' | tee -a "$report"
    fi
  done
done
printf 'flake-hunt: %d runs of %d tree(s), %d cases run; stress %s, -j %d, random order; logs in %s/\n' \
  $((runs * ${#trees[@]})) ${#trees[@]} "$total_cases" "$([ "$stress" -eq 1 ] && echo on || echo off)" "$jobs" "$out" |
  tee -a "$report"
exit "$failed_any"
