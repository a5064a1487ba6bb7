#!/usr/bin/env bash
# Installs posenc into a fresh prefix (cmake --install) and runs the README's routes exactly as
# written there (the snippets are extracted from README.md; the C++ route's sources are
# examples/cpp/my_check/): a torch RoPE built from a model's
# config.json (a published Llama 3.1 8B config, tests/data/hf_configs/) judged on that model's
# vectors, a C plugin, Python with the installed package and torch, a results file, and a C++
# consumer of the installed package built with find_package(posenc CONFIG) and with pkg-config;
# then a consumer that only reads vectors (examples/cpp/read_vectors.cpp), linked with the vectors
# layer alone, whose link line must name neither the judge nor RapidCheck, SLEEF or MPFR.
# Usage: readme_routes_test.sh BUILD_DIR README.md PYTHON TORCH (ON: run the torch routes, which
# need torch and numpy in PYTHON: the tests' .venv, scripts/requirements-python.txt)
set -euo pipefail
build=$1 readme=$2 python=$3 torch=$4
source_dir=$(cd "$(dirname "$readme")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export PREFIX=$tmp/prefix
source "$source_dir/tests/lib/expect.sh"

cmake --install "$build" --prefix "$PREFIX" >/dev/null
expect --regex "installed CLI finds the installed vectors" 0 "vector files in $PREFIX/share/posenc/vectors" "$PREFIX/bin/posenc" list
expect --regex "installed MANIFEST and schemas" 0 "rope.schema.json" ls "$PREFIX/share/posenc/vectors/MANIFEST" \
  "$PREFIX/share/posenc/vectors/schema/rope.schema.json"

mkdir "$tmp/work"
"$python" "$source_dir/tests/install/readme_snippets.py" "$readme" "$tmp/work"
cd "$tmp/work"
expect --regex "C plugin route: CONFORMANT under standard" 0 "^CONFORMANT" bash -e plugin-route.sh
expect --regex "C plugin route: its HTML report" 0 "error-plot" cat myrope.html
expect --regex "C plugin route: the same plugin fails strict" 1 "NOT CONFORMANT" \
  "$PREFIX/bin/posenc" conform --impl ./libmyrope.so --profile strict --property-cases 0
if [ "$torch" = ON ]; then
  # The routes' `python3` is PYTHON, the interpreter that has torch (another python3 may come first on PATH).
  # The model-config route reads config.json beside it: here Llama 3.1 8B's (llama3 scaling).
  cp "$source_dir/tests/data/hf_configs/llama-3.1-8b.json" config.json
  expect --regex "model-config route: a float32 llama3 RoPE CONFORMANT under standard on the model's vectors" 0 \
    "^CONFORMANT" env PATH="$(dirname "$python"):$PATH" bash -e model-route.sh
  grep -q "^rope/Llama-3.1-8B.json " <<<"$expect_output" && ok "model-config route: judged on the vectors generated for config.json" ||
    fail "model-config route: no line for rope/Llama-3.1-8B.json (the model's vectors, named after it) in its summary"
  expect --regex "model-config route: float32 angles fail strict, strict only up to position 8" 1 \
    "f32 margin .*, strict up to position 8\( \|$\)" env PYTHONPATH="$PREFIX/share/posenc/python" "$python" my_model_rope.py strict
  expect --regex "Python torch route (the installed package): CONFORMANT under standard" 0 "^CONFORMANT" \
    env PATH="$(dirname "$python"):$PATH" PYTHONPATH="$PREFIX/share/posenc/python" bash -e torch-route.sh
  expect --regex "Python torch route: float32 angles fail strict, strict only up to position 7" 1 \
    "f32 margin .*, strict up to position 7 (fails at position [0-9]*)$" env PYTHONPATH="$PREFIX/share/posenc/python" "$python" my_torch_rope.py strict
  expect --regex "Python attention route: HF RoPE then SDPA CONFORMANT under standard in f32 and bf16" 0 \
    "^CONFORMANT: [0-9]* checks judged (f32 [0-9]*, bf16 [0-9]*)" \
    env PATH="$(dirname "$python"):$PATH" PYTHONPATH="$PREFIX/share/posenc/python" bash -e attention-route.sh
  expect --regex "Python attention route: float32 angles fail strict from position 65,536" 1 \
    "f32 margin .*, strict up to position 4095 (fails at position 65536" \
    env PYTHONPATH="$PREFIX/share/posenc/python" "$python" my_torch_attention.py strict
else
  echo "skip: the model-config and Python torch routes (POSENC_PYTHON_TESTS=OFF: no torch in .venv)"
fi
expect --regex "results-file route: CONFORMANT under standard" 0 "^CONFORMANT" bash -e python-route.sh
cp "$source_dir/examples/cpp/my_check/my_check.cpp" "$source_dir/examples/cpp/my_check/CMakeLists.txt" .
expect --regex "C++ route: find_package and pkg-config builds both CONFORMANT" 0 "^CONFORMANT" bash -e cpp-route.sh
test "$(grep -c '^CONFORMANT' <<<"$expect_output")" = 2 || fail "C++ route: expected two CONFORMANT runs"
# The vectors layer alone, with CMake and with pkg-config.
mkdir "$tmp/reader" && cd "$tmp/reader"
cp "$source_dir/examples/cpp/read_vectors.cpp" .
ln -s "$PREFIX/share/posenc/vectors" vectors
cat >CMakeLists.txt <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(reader CXX)
set(CMAKE_CXX_STANDARD 20)
find_package(posenc 0.1 CONFIG REQUIRED)
add_executable(reader read_vectors.cpp)
target_link_libraries(reader PRIVATE posenc::vectors)
CMAKE
expect --regex "vectors-only consumer builds with posenc::vectors and reads the vectors" 0 "max abs error" \
  bash -ec 'cmake -S . -B build -DCMAKE_PREFIX_PATH="$PREFIX" && cmake --build build && build/reader'
link=$(cat build/CMakeFiles/reader.dir/link.txt)
pc_libs=$(PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig" pkg-config --libs --static posenc-vectors)
for line in "CMake: $link" "pkg-config: $pc_libs"; do
  if grep -qiE 'rapidcheck|sleef|mpfr|posenc_judge|posenc_fast|posenc_reference' <<<"$line"; then
    fail "vectors-only link line pulls in more than the vectors layer: $line"
  else
    ok "vectors-only link line (${line%%:*}) has no judge, reference, fast, RapidCheck, SLEEF or MPFR"
  fi
done
expect --regex "vectors-only consumer builds with pkg-config posenc-vectors" 0 "max abs error" \
  bash -ec 'c++ -O1 read_vectors.cpp $(PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig" pkg-config --cflags --libs posenc-vectors) -o reader_pc && ./reader_pc'

expect_summary
