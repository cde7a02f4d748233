#!/usr/bin/env bash
# The long fuzz runs of docs/reliability.md: every harness of the sanitizer
# tree for RUNS executions (10^6 by default) or SECONDS seconds, whichever
# comes first, one after the other, from the committed seeds and what earlier
# runs found. Prints one line per harness: executions, coverage (cov: edges,
# ft: features), corpus size and findings; exits 1 if any harness found
# something (its input is in BUILD_DIR/tests/fuzz/work/findings/).
#   tests/fuzz/campaign.sh [BUILD_DIR] [RUNS] [SECONDS] [NAME...]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$root/build-sanitize}"
runs="${2:-1000000}"
seconds="${3:-7200}"
shift $(($# < 3 ? $# : 3))
names=("$@")
if [ ${#names[@]} -eq 0 ]; then names=(npz onnx mblt spec quant_config calib device mxq run); fi
work="$build/tests/fuzz/work"
mkdir -p "$work/logs"
printf '%-13s %10s %8s %8s %8s %s\n' harness execs cov ft corpus findings
failed=0
for name in "${names[@]}"; do
  log="$work/logs/$name.log"
  before=$(ls "$work/findings" 2>/dev/null | grep -c "^$name-" || true)
  status=0
  "$root/tests/fuzz/run_fuzz.sh" "$build/bin/fuzz_$name" "$root/tests/fuzz" "$name" "$work" \
    -runs="$runs" -max_total_time="$seconds" >"$log" 2>&1 || status=$?
  if [ "$status" -ne 0 ]; then failed=1; fi
  after=$(ls "$work/findings" 2>/dev/null | grep -c "^$name-" || true)
  execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | awk '{print $2}' | tail -1)
  last=$(grep -E '^#[0-9]+' "$log" | tail -1)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corpus=$(ls "$work/corpus/$name" | wc -l)
  printf '%-13s %10s %8s %8s %8s %s\n' "$name" "${execs:-?}" "${cov:-?}" "${ft:-?}" "$corpus" \
    "$((after - before)) new (exit $status)"
done
exit "$failed"
