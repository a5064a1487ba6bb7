#!/usr/bin/env bash
# Configures build-asan/, the one sanitized build (scripts/sanitizers.sh runs its tests,
# scripts/fuzz.sh its libFuzzer targets): clang 16, everything with
# -fsanitize=fuzzer-no-link,address,undefined and no recovery (POSENC_FUZZ). -O1 with line tables
# only: the instrumented heavy reference units compile in far less time than at -O2 -g, and
# sanitizer reports still name file and line. No browser test (it checks rendering, which
# `make test` does) and no peers (POSENC_PEER_TESTS: they judge other projects' code, and would
# add a second ggml build; the posenc verify and serve they go through run here in the verify and
# python tests).
# Without ccache, a unity build (CMAKE_UNITY_BUILD, batches of 8 files of a target in one
# translation unit): with the emulated kernels at -O0 (fast/CMakeLists.txt), the build takes 642
# CPU s instead of 938, 5 min 40 s instead of 8 min on 2 cores. With ccache (CMakeLists.txt), one
# file per translation unit: a unity file includes its sources by absolute path, so a clone in
# another folder would miss every entry, where per-file entries are found from any clone.
# POSENC_CCACHE=OFF in the environment configures it without ccache (and so as a unity build).
set -euo pipefail
cd "$(dirname "$0")/.."
flags="-O1 -gline-tables-only -DNDEBUG"
unity=ON
if command -v ccache >/dev/null && [ "${POSENC_CCACHE:-ON}" != OFF ]; then unity=OFF; fi
CC=clang-16 CXX=clang++-16 scripts/configure.sh build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=$flags" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=$flags" \
  -DCMAKE_UNITY_BUILD=$unity -DPOSENC_CCACHE=${POSENC_CCACHE:-ON} -DPOSENC_FUZZ=ON -DBUILD_TESTING=ON -DPOSENC_BROWSER_TEST=OFF -DPOSENC_PEER_TESTS=OFF \
  -DPOSENC_WERROR="${POSENC_WERROR:-OFF}"
