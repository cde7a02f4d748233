#!/usr/bin/env bash
# Fuzzes one harness from its committed seeds and past findings:
#   run_fuzz.sh HARNESS SOURCE_DIR NAME WORK_DIR [libFuzzer flags...]
# New inputs go to WORK_DIR/corpus/NAME (kept between runs), crashing ones
# to WORK_DIR/findings/NAME-*; the exit status is libFuzzer's (0: nothing
# found). The last lines are libFuzzer's final statistics.
set -euo pipefail
harness="$1" src="$2" name="$3" work="$4"
shift 4
mkdir -p "$work/corpus/$name" "$work/findings" "$work/tmp/$name"
dirs=("$work/corpus/$name" "$src/corpus/$name")
if [ -d "$src/regressions/$name" ]; then dirs+=("$src/regressions/$name"); fi
flags=(-timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1
       "-artifact_prefix=$work/findings/$name-")
if [ -f "$src/dict/$name.dict" ]; then flags+=("-dict=$src/dict/$name.dict"); fi
# Each harness writes its files under $TMPDIR/eulernpu_fuzz.<pid>; harnesses
# fuzzing side by side must not clean up each other's.
export TMPDIR="$work/tmp/$name"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
status=0
"$harness" "${flags[@]}" "$@" "${dirs[@]}" || status=$?
rm -rf "$work/tmp/$name"/eulernpu_fuzz.*
exit "$status"
