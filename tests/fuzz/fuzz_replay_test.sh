#!/usr/bin/env bash
# Each fuzz target, built without libFuzzer (posenc_replay_NAME), over its seed corpus and every
# past crash input (tests/fuzz_regressions/NAME): all must run clean.
# Usage: fuzz_replay_test.sh REPLAY_DIR SOURCE_DIR
set -euo pipefail
replay=$1 src=$2
for name in vector_file results_file cli_numbers plugin_abi; do
  inputs=()
  if [ "$name" = vector_file ]; then
    while IFS= read -r f; do inputs+=("$f"); done < <(find "$src/vectors" -name '*.json' -not -path '*/schema/*' -size -65k)
  else
    inputs+=("$src/fuzz/corpus/$name")
  fi
  [ -d "$src/tests/fuzz_regressions/$name" ] && inputs+=("$src/tests/fuzz_regressions/$name")
  echo -n "$name: "
  "$replay/posenc_replay_$name" "${inputs[@]}"
done
