#!/usr/bin/env bash
# Regenerates the small default captures bundled under captures/ from the built-in OS profiles.
# Deterministic: the same perfsim build and seed give the same bytes.
#   usage: scripts/make-bundled-captures.sh [path/to/perfsim]
set -euo pipefail
cd "$(dirname "$0")/.."
perfsim=${1:-build/cli/perfsim}
for profile in win2000 2003 2008r2 2016 2022; do
  "$perfsim" synth --profile "$profile" --seed 1 --host-name "PERFSIM-$(echo "$profile" | tr a-z A-Z)" --duration 300 --interval 15 --out "captures/default-$profile.perfcap"
done
