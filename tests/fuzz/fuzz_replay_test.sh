#!/usr/bin/env bash
# A fuzz target, built without libFuzzer (posenc_replay_NAME), over its seed corpus and every
# past crash input (tests/fuzz_regressions/NAME): all must run clean. In the sanitized build
# (POSENC_FUZZ) the target is instrumented like the fuzzer, so a regression input fails here.
# Usage: fuzz_replay_test.sh REPLAY_EXECUTABLE NAME SOURCE_DIR
set -euo pipefail
replay=$1 name=$2 src=$3
inputs=()
if [ "$name" = vector_file ]; then
  while IFS= read -r f; do inputs+=("$f"); done < <(find "$src/vectors" -name '*.json' -not -path '*/schema/*' -size -65k)
else
  inputs+=("$src/fuzz/corpus/$name")
fi
[ -d "$src/tests/fuzz_regressions/$name" ] && inputs+=("$src/tests/fuzz_regressions/$name")
echo -n "$name: "
"$replay" "${inputs[@]}"
