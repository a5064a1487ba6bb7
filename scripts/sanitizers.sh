#!/usr/bin/env bash
# The second and third build configurations: AddressSanitizer + UndefinedBehaviorSanitizer (no
# recovery) running the test suite in build-asan/, and ThreadSanitizer running the
# multi-threaded fast-path tests in build-tsan/. Any sanitizer report fails a test.
# Under ASan two tests are left out: the headless-Chromium check of the HTML page and the
# install-and-consume test (its consumers would have to link the sanitizer runtime); both run
# in `make test`, and the C++ they exercise (reports, compare, the plugin and results routes) is
# covered under ASan by the cli, verify, plugin and conform tests. The time saved keeps CI short.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)

cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPOSENC_SANITIZE=ON -DPOSENC_BROWSER_TEST=OFF >/dev/null
cmake --build build-asan -j "$jobs"
(cd build-asan && ctest --output-on-failure -j "$jobs" -E '^readme_routes_installed$')

cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPOSENC_TSAN=ON -DPOSENC_BROWSER_TEST=OFF >/dev/null
cmake --build build-tsan -j "$jobs" --target posenc_fast_tests
(cd build-tsan && ctest --output-on-failure -R '^fast_paths$')
