#!/usr/bin/env bash
# The second and third build configurations: AddressSanitizer + UndefinedBehaviorSanitizer (no
# recovery) running the whole test suite in build-asan/, and ThreadSanitizer running the
# multi-threaded fast-path tests in build-tsan/. Any sanitizer report fails a test.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
browser=${POSENC_BROWSER_TEST:-ON}

cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPOSENC_SANITIZE=ON -DPOSENC_BROWSER_TEST="$browser" >/dev/null
cmake --build build-asan -j "$jobs"
(cd build-asan && ctest --output-on-failure -j "$jobs")

cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPOSENC_TSAN=ON -DPOSENC_BROWSER_TEST=OFF >/dev/null
cmake --build build-tsan -j "$jobs" --target posenc_fast_tests
(cd build-tsan && ctest --output-on-failure -R '^fast_paths$')
