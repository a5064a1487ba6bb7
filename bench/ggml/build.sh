#!/usr/bin/env bash
# bench/ggml/build.sh OUT GGML_SOURCE_DIR [CMAKE-ARGS...]: builds OUT/posenc_ggml_attention.so,
# llama.cpp's CPU flash attention for the bench, from the ggml sources the llama.cpp peer
# extracted (peers/llamacpp/build-ggml.sh: GGML_SOURCE_DIR is its OUT/ggml). Where the peer could
# not have them (its OUT/unavailable), OUT/unavailable gets its reason and the script exits 0:
# the bench then prints ggml's rows as unavailable. A build that fails is an error.
set -euo pipefail
out=$1 ggml=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
rm -f "$out/unavailable"
if [[ -f $ggml/../unavailable ]]; then
  echo "the llama.cpp peer's ggml sources: $(cat "$ggml/../unavailable")" >"$out/unavailable"
  exit 0
fi
if [[ ! -f $ggml/CMakeLists.txt ]]; then
  echo "no ggml sources at $ggml (peers/llamacpp/build-ggml.sh extracts them)" >"$out/unavailable"
  exit 0
fi
args=$(printf '%q ' "$@")
if [[ ! -f $out/build/CMakeCache.txt || $(cat "$out/build/posenc-args" 2>/dev/null) != "$args" ]]; then
  cmake -S "$here" -B "$out/build" -DCMAKE_BUILD_TYPE=Release -DGGML_SOURCE_DIR="$ggml" "$@" >"$out/configure.log" 2>&1 ||
    { cat "$out/configure.log" >&2; rm -f "$out/build/CMakeCache.txt"; exit 1; }
  echo "$args" >"$out/build/posenc-args"
fi
# Its own jobs, as build-ggml.sh says why.
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL cmake --build "$out/build" -j"${POSENC_GGML_JOBS:-2}" --target posenc_ggml_attention >"$out/build.log" 2>&1 ||
  { tail -n 60 "$out/build.log" >&2; exit 1; }
cp "$out/build/posenc_ggml_attention.so" "$out/posenc_ggml_attention.so.tmp"
mv "$out/posenc_ggml_attention.so.tmp" "$out/posenc_ggml_attention.so"
