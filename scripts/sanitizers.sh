#!/usr/bin/env bash
# The sanitizer runs (make sanitize). Any sanitizer report fails a test.
# - build-asan/ (scripts/configure-asan.sh): ONE clang build with ASan and UBSan that serves both
#   this run and the libFuzzer targets (make fuzz). It runs every CTest test (the fuzz replays
#   instrumented like the fuzzers) but the two whole-set reference runs named below and two more:
#   the headless-Chromium page check (not configured there) and the install-and-consume test, whose consumers would have to
#   link the sanitizer runtime; both run in `make test`, and the C++ they exercise (reports,
#   compare, the plugin and results routes) runs here in the cli, verify, plugin and suite tests.
#   CTEST_ARGS selects tests (e.g. "-L hostile", "-LE plugins").
# - build-tsan/: GCC with -fsanitize=thread; only the multi-threaded fast tests are built and run.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
werror=${POSENC_WERROR:-OFF}

scripts/configure-asan.sh
cmake --build build-asan -j "$jobs"
# Two whole-set runs of the reference are left out here: Conform.ReferencePassesExactOnEveryVector
# and plugins.reference.all. The instrumented multiprecision reference takes many times its Release
# time on every case of every file (conform_mutants and plugins.reference.all took ~18 minutes each
# at -j2 on the issue-15 vectors, on a loaded machine). Their code runs
# here anyway: vectors_regenerate_identical evaluates every case through the reference (the
# generator), the crosscheck its random cases, the per-family plugins.reference.* tests and the
# plugin_abi fuzz target the reference plugin. Both run in `make test`.
# shellcheck disable=SC2086  # CTEST_ARGS is a list of ctest options
(cd build-asan && GTEST_FILTER=-Conform.ReferencePassesExactOnEveryVector \
  ctest --output-on-failure -j "$jobs" -E '^(readme_routes_installed|plugins\.reference\.all)$' ${CTEST_ARGS:-})

scripts/configure.sh build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPOSENC_TSAN=ON -DPOSENC_BROWSER_TEST=OFF \
  -DPOSENC_WERROR="$werror"
cmake --build build-tsan -j "$jobs" --target posenc_fast_tests
(cd build-tsan && ctest --output-on-failure -R '^fast_paths$')
