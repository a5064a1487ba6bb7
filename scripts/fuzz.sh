#!/usr/bin/env bash
# The libFuzzer targets (fuzz/), linked in the sanitized clang build build-asan/
# (scripts/configure-asan.sh; make sanitize has usually built everything else there), each run for
# FUZZ_SECONDS (default 30), as many at once as there are cores, from its seed corpus: the shipped
# vector files up to 64 KB for the vector-file reader, fuzz/corpus/NAME for the others, plus
# tests/fuzz_regressions/NAME.
# Prints the executions each target ran clean. A crash fails the script; its input is left in
# build-asan/crashes/NAME/ (add it to tests/fuzz_regressions/NAME/ with the fix).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-30}
build="build-asan"
targets=(vector_file results_file cli_numbers plugin_abi)

[ -f "$build/CMakeCache.txt" ] || scripts/configure-asan.sh
cmake --build "$build" -j "$(nproc)" --target "${targets[@]/#/posenc_fuzz_}"

mkdir -p "$build/seeds/vector_file"
find vectors -name '*.json' -not -path '*/schema/*' -size -65k -exec cp {} "$build/seeds/vector_file/" \;
# One target: its log in $build/fuzz_NAME.log, its verdict printed by report().
fuzz_one() {
  local name=$1 corpus=$build/corpus/$1 crashes=$build/crashes/$1 max_len=4096
  mkdir -p "$corpus" "$crashes"
  local seeds=("fuzz/corpus/$name")
  [ "$name" = vector_file ] && seeds=("$build/seeds/vector_file") max_len=65536
  [ -d "tests/fuzz_regressions/$name" ] && seeds+=("tests/fuzz_regressions/$name")
  "$build/fuzz/posenc_fuzz_$name" -max_total_time="$seconds" -max_len="$max_len" -timeout=20 -rss_limit_mb=4096 \
    -print_final_stats=1 -artifact_prefix="$crashes/" "$corpus" "${seeds[@]}" >"$build/fuzz_$name.log" 2>&1
}
report() {
  local name=$1 ok=$2 log=$build/fuzz_$1.log
  if [ "$ok" = 0 ]; then
    echo "fuzz $name: $(awk '/stat::number_of_executed_units/ {print $2}' "$log") executions in ${seconds} s," \
      "no crash (corpus $(ls "$build/corpus/$name" | wc -l) inputs)"
  else
    echo "fuzz $name: FAILED, input in $build/crashes/$name/:"; tail -40 "$log"
  fi
}
# The targets run side by side, one per core (each fuzzer is single-threaded).
status=0
pids=() names=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT  # no fuzzer outlives an interrupted run
for name in "${targets[@]}"; do
  fuzz_one "$name" & pids+=($!) names+=("$name")
  if [ ${#pids[@]} -ge "$(nproc)" ] || [ "$name" = "${targets[-1]}" ]; then
    for i in "${!pids[@]}"; do
      ok=0; wait "${pids[$i]}" || ok=$?
      report "${names[$i]}" "$ok"
      [ "$ok" = 0 ] || status=1
    done
    pids=() names=()
  fi
done
exit $status
