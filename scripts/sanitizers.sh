#!/usr/bin/env bash
# The sanitizer runs (make sanitize). Any sanitizer report fails a test.
# - build-asan/ (scripts/configure-asan.sh): ONE clang build with ASan and UBSan that serves both
#   this run and the libFuzzer targets (make fuzz). It runs every CTest test (the fuzz replays
#   instrumented like the fuzzers) but the whole-file reference runs named below and two more:
#   the headless-Chromium page check (not configured there), the install-and-consume test, whose
#   consumers would have to link the sanitizer runtime, and the `pip install ./python` test,
#   whose wheel builds its own uninstrumented CLI; they run in `make test`, and the C++ they
#   exercise (reports, compare, the plugin and results routes, the Python route's serve) runs
#   here in the cli, verify, plugin, python and suite tests.
#   CTEST_ARGS selects tests (e.g. "-L hostile", "-LE plugins").
# - build-tsan/: GCC with -fsanitize=thread; only the multi-threaded fast tests are built and run,
#   on the vector paths (their scalar instances run in `make test` and in build-asan/).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
werror=${POSENC_WERROR:-OFF}

scripts/configure-asan.sh
cmake --build build-asan -j "$jobs"
# Left out here, run in `make test` only: the runs that recompute whole vector files through the
# instrumented reference, several times their Release time (conform_mutants takes 307 s and
# plugins.reference.all ~18 minutes under ASan at -j2). What they exercise runs here anyway:
# - the reference through the ABI on the attention files (plugins.reference.attention: minutes of
#   certified attention under ASan); the reference_attention_abi test calls its posenc_attention
#   directly (layouts, a NULL lse, refusals) here;
# - the reference: vectors_regenerate_identical evaluates every case through it (the generator),
#   the crosscheck its random cases, the per-family plugins.reference.* tests and the plugin_abi
#   fuzz target the reference plugin;
# - the judging of each in-process mutant below (> 2 s in Release): the same mutants as plugins
#   (plugins.*.mutant, plugins.*.property, the unrotated and sign-flip plugins) go through the
#   same runner, profiles and properties via `posenc conform`.
# - every vector through the plugin ABI with every property check in one run
#   (plugins.double.standard, 154 s of test time under ASan): the runner, the ABI and the judge
#   run here on each family's files in the other plugins.* checks, and the properties through
#   the ABI in plugins.*.properties.
# - the attention properties' search for a counterexample on each of six buggy kernels
#   (AttentionProperties.EachFailsOnTheBugItIsMeantToCatch, 52 s under ASan): the same properties
#   run here on the careful kernel (AttentionProperties.HoldForTheCarefulKernel), and a failing
#   property's search and shrinking in the plugins.*.property checks.
# conform_mutants' quick checks (tampered vectors, invalid parameters, ALiBi, one ulp off, the
# margin of a pass, ...) still run here. And the recomputation of every shipped case through the
# reference (vectors_expected_values), which vectors_regenerate_identical does here
# too (it evaluates every case through the reference, then compares the files byte for byte).
# Tests are left out by name (ctest -E) or, within a test binary, by GTEST_FILTER; the latter
# does not reach a test registered with its own --gtest_filter (the flag wins), which is why the
# recomputation is a test of its own (vectors_expected_values), left out by name.
left_out=(
  Conform.ReferencePassesExactOnEveryVector
  Conform.UnrotatedAndSignFlippedAreNeverConformant
  Conform.VacuousBoundsAreNotJudgedNeverPassed
  Conform.PropertiesHoldForTheReferenceAndCatchAnOffByOne
  Conform.SwappedLayoutIsRejected
  Conform.PositionOffByOneIsRejected
  Conform.YarnWithoutAttentionFactorIsRejected
  Conform.IterativeThetaAndBf16AnglesAreRejected
  Conform.IterativeThetaIsNotCoveredByStandard
  Conform.Float32AnglesFailStrictAtLongContextButPassStandard
  Conform.MarginAndAccurateContextOfFloat32Angles
  AttentionProperties.EachFailsOnTheBugItIsMeantToCatch
)
gtest_filter="-$(IFS=:; echo "${left_out[*]}")"
# shellcheck disable=SC2086  # CTEST_ARGS is a list of ctest options
(cd build-asan && GTEST_FILTER=$gtest_filter \
  ctest --output-on-failure -j "$jobs" -E '^(readme_routes_installed|pip_install_python|plugins\.reference\.(all|attention)|plugins\.double\.standard|vectors_expected_values)$' \
  ${CTEST_ARGS:-})

scripts/configure.sh build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPOSENC_TSAN=ON -DPOSENC_BROWSER_TEST=OFF \
  -DPOSENC_WERROR="$werror"
cmake --build build-tsan -j "$jobs" --target posenc_fast_tests
# The per-path tests (RoPE's and attention's) on the vector paths only: the threads (workers, the
# split of tokens or of attention's work items, the rows kept per thread) are the driver's, the
# same for every path, and every thread works on its own tokens or items; the scalar instances run
# in the Release and ASan builds. The tests that are not per path (attention's concurrent callers
# among them) run here in full.
(cd build-tsan && GTEST_FILTER='-Isa/*/scalar' ctest --output-on-failure -R '^fast_paths$')
