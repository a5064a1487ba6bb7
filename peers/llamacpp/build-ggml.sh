#!/usr/bin/env bash
# peers/llamacpp/build-ggml.sh OUT PYTHON [CMAKE-ARGS...]: builds OUT/posenc_llamacpp_plugin.so, the
# llama.cpp peer (peers/llamacpp/plugin), from llama.cpp's ggml in the pinned llama-cpp-python
# sdist on PyPI: downloaded with `PYTHON -m pip download` (the ordinary client) into OUT/download,
# checked against its sha256, its vendor/llama.cpp/ggml extracted to OUT/ggml (nothing of ggml is
# kept in the project), then the sub-project configured and built in OUT/build. CMAKE-ARGS go to
# that configure (compilers, launchers, POSENC_WERROR). When the sdist cannot be had (no network,
# PyPI refuses, another sha256), OUT/unavailable gets one line of reason and the script exits 0:
# the peer's tests then skip, never pass or fail. A build that fails is an error. Run by the
# build (target posenc_llamacpp_plugin, tests/peers/CMakeLists.txt), never by a test.
set -euo pipefail
out=$1 python=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
version=0.3.36
sha256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
sdist=$out/download/llama_cpp_python-$version.tar.gz
mkdir -p "$out/download"
rm -f "$out/unavailable"

unavailable() {
  echo "$1" >"$out/unavailable"
  echo "posenc: llama.cpp peer not built: $1" >&2
  exit 0
}

if [[ ! -f $sdist ]] || ! echo "$sha256  $sdist" | sha256sum --check --status; then
  rm -f "$sdist"
  # --no-binary for the package alone: its build backend (pip reads the sdist's metadata with
  # it) comes as wheels.
  if ! "$python" -m pip download --quiet --disable-pip-version-check --no-input --no-deps --no-binary llama-cpp-python \
      "llama-cpp-python==$version" -d "$out/download" >"$out/download/pip.log" 2>&1; then
    unavailable "llama-cpp-python==$version sdist could not be downloaded with $python -m pip: $(tail -n 1 "$out/download/pip.log")"
  fi
  if ! echo "$sha256  $sdist" | sha256sum --check --status; then
    unavailable "llama-cpp-python==$version sdist does not have the pinned sha256 $sha256"
  fi
fi

if [[ ! -f $out/ggml/.extracted-$version ]]; then
  rm -rf "$out/ggml" "$out/build"
  mkdir -p "$out/ggml"
  tar -xzf "$sdist" -C "$out/ggml" --strip-components=4 "llama_cpp_python-$version/vendor/llama.cpp/ggml"
  touch "$out/ggml/.extracted-$version"
fi
# Configured again when CMAKE-ARGS change (POSENC_WERROR, compilers), else only built.
args=$(printf '%q ' "$@")
if [[ ! -f $out/build/CMakeCache.txt || $(cat "$out/build/posenc-args" 2>/dev/null) != "$args" ]]; then
  cmake -S "$here/plugin" -B "$out/build" -DCMAKE_BUILD_TYPE=Release -DGGML_SOURCE_DIR="$out/ggml" \
    -DPOSENC_SOURCE_DIR="$(cd "$here/../.." && pwd)" "$@" >"$out/configure.log" 2>&1 ||
    { cat "$out/configure.log" >&2; rm -f "$out/build/CMakeCache.txt"; exit 1; }
  echo "$args" >"$out/build/posenc-args"
fi
# Its own 2 jobs: CMake (3.25) gives a custom target's command no access to the parent make's
# jobserver, so the sub-make must not look for one.
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL cmake --build "$out/build" -j"${POSENC_GGML_JOBS:-2}" --target posenc_llamacpp_plugin >"$out/build.log" 2>&1 ||
  { tail -n 60 "$out/build.log" >&2; exit 1; }
cp "$out/build/posenc_llamacpp_plugin.so" "$out/posenc_llamacpp_plugin.so.tmp"
mv "$out/posenc_llamacpp_plugin.so.tmp" "$out/posenc_llamacpp_plugin.so"
