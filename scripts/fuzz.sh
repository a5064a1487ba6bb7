#!/usr/bin/env bash
# The libFuzzer targets (fuzz/), linked in the sanitized clang build build-asan/
# (scripts/configure-asan.sh; make sanitize has usually built everything else there), each run for
# FUZZ_SECONDS (default 30) from its seed corpus: the shipped vector files up to 64 KB for the
# vector-file reader, fuzz/corpus/NAME for the others, plus tests/fuzz_regressions/NAME.
# Prints the executions each target ran clean. A crash fails the script; its input is left in
# build-asan/crashes/NAME/ (add it to tests/fuzz_regressions/NAME/ with the fix).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-30}
build=build-asan
targets=(vector_file results_file cli_numbers plugin_abi)

[ -f "$build/CMakeCache.txt" ] || scripts/configure-asan.sh
cmake --build "$build" -j "$(nproc)" --target "${targets[@]/#/posenc_fuzz_}"

mkdir -p "$build/seeds/vector_file"
find vectors -name '*.json' -not -path '*/schema/*' -size -65k -exec cp {} "$build/seeds/vector_file/" \;
status=0
for name in "${targets[@]}"; do
  corpus=$build/corpus/$name crashes=$build/crashes/$name
  mkdir -p "$corpus" "$crashes"
  seeds=("fuzz/corpus/$name")
  [ "$name" = vector_file ] && seeds=("$build/seeds/vector_file")
  [ -d "tests/fuzz_regressions/$name" ] && seeds+=("tests/fuzz_regressions/$name")
  max_len=4096
  [ "$name" = vector_file ] && max_len=65536
  log=$build/fuzz_$name.log
  if "$build/fuzz/posenc_fuzz_$name" -max_total_time="$seconds" -max_len="$max_len" -timeout=20 -rss_limit_mb=4096 \
       -print_final_stats=1 -artifact_prefix="$crashes/" "$corpus" "${seeds[@]}" >"$log" 2>&1; then
    runs=$(awk '/stat::number_of_executed_units/ {print $2}' "$log")
    echo "fuzz $name: $runs executions in ${seconds} s, no crash (corpus $(ls "$corpus" | wc -l) inputs)"
  else
    echo "fuzz $name: FAILED, input in $crashes/:"; tail -40 "$log"; status=1
  fi
done
exit $status
