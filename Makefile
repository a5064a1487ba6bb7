# The two entry points of the README, and CI's other steps. Each installs the Debian packages it
# needs that are missing (scripts/install-deps.sh TARGET), configures (cmake's output shown only
# when it fails), builds what it runs, and runs it.
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
# OFF skips the HTML report's headless-Chromium test and the browser it needs (~300 MB).
BROWSER_TEST ?= ON
# OFF skips the Python package's tests with PyTorch and the PyPI torch they need in .venv.
PYTHON_TESTS ?= ON
# OFF leaves out the peers label (peers/: known implementations such as Hugging Face transformers
# judged on a small filter) and the PyPI packages of scripts/requirements-peers.txt.
PEER_TESTS ?= ON
# ON makes warnings errors (CI exports POSENC_WERROR=ON; scripts/ read it too).
POSENC_WERROR ?= OFF
export POSENC_WERROR
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release
CONFIGURE = scripts/configure.sh $(BUILD_DIR) $(CMAKE_FLAGS) -DPOSENC_WERROR=$(POSENC_WERROR)
# A first configure for the CLI alone leaves the tests (and GoogleTest) out; once `make test` has
# turned them on, `make conform` keeps them.
NO_TESTS = $(if $(wildcard $(BUILD_DIR)/CMakeCache.txt),,-DBUILD_TESTING=OFF)

.PHONY: all build conform test sanitize fuzz bench vectors peers verify-models mutation clean

all: build

build:
	@scripts/install-deps.sh conform
	@$(CONFIGURE) $(NO_TESTS)
	@cmake --build $(BUILD_DIR) -j $(JOBS)

# Main job: the conformance suite on the shipped vectors, run on the built-in fast implementation
# (the best ISA path here, or POSENC_ISA) under the strict profile.
conform:
	@scripts/install-deps.sh conform
	@$(CONFIGURE) $(NO_TESTS)
	@cmake --build $(BUILD_DIR) -j $(JOBS) --target posenc
	@$(BUILD_DIR)/posenc conform --impl fast --profile strict

# Every test (ctest -L LABEL in $(BUILD_DIR) runs one kind, see tests/CMakeLists.txt).
test:
	@POSENC_BROWSER_TEST=$(BROWSER_TEST) POSENC_PYTHON_TESTS=$(PYTHON_TESTS) POSENC_PEER_TESTS=$(PEER_TESTS) \
	  scripts/install-deps.sh test
	@$(CONFIGURE) -DBUILD_TESTING=ON -DPOSENC_BROWSER_TEST=$(BROWSER_TEST) -DPOSENC_PYTHON_TESTS=$(PYTHON_TESTS) \
	  -DPOSENC_PEER_TESTS=$(PEER_TESTS)
	@cmake --build $(BUILD_DIR) -j $(JOBS)
	@cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

# One clang build with ASan+UBSan (build-asan/) running every test, TSan on the threaded fast
# tests (build-tsan/). CTEST_ARGS selects tests, e.g. CTEST_ARGS="-LE plugins" or "-L hostile".
sanitize:
	@scripts/install-deps.sh sanitize
	@CTEST_ARGS="$(CTEST_ARGS)" scripts/sanitizers.sh

# The libFuzzer targets, from the same build-asan/, for FUZZ_SECONDS each (longer on demand).
FUZZ_SECONDS ?= 30
fuzz:
	@scripts/install-deps.sh fuzz
	@FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/fuzz.sh

# Mutation testing of the formulas (docs/mutation.md): every mutant of tests/mutation/mutants.py
# built as an implementation and judged on the shipped vectors under `standard`; prints the score
# and every survivor (ctest -L mutation runs a fixed sample of them).
mutation:
	@POSENC_BROWSER_TEST=$(BROWSER_TEST) POSENC_PYTHON_TESTS=$(PYTHON_TESTS) POSENC_PEER_TESTS=$(PEER_TESTS) \
	  scripts/install-deps.sh test
	@$(CONFIGURE) -DBUILD_TESTING=ON -DPOSENC_BROWSER_TEST=$(BROWSER_TEST) -DPOSENC_PYTHON_TESTS=$(PYTHON_TESTS) \
	  -DPOSENC_PEER_TESTS=$(PEER_TESTS) -DPOSENC_MUTATION_CAMPAIGN=ON
	@/usr/bin/python3 tests/mutation/campaign.py run $(BUILD_DIR) --jobs $(JOBS)

# Speed of the fast path against copy bandwidth, naive loops and the reference, with a ratio table.
bench:
	@scripts/install-deps.sh bench
	@$(CONFIGURE) $(NO_TESTS) -DPOSENC_BUILD_BENCH=ON
	@cmake --build $(BUILD_DIR) -j $(JOBS) --target posenc_bench
	@$(BUILD_DIR)/bench/posenc_bench

# Regenerates the golden vectors and their MANIFEST from the reference (deterministic).
vectors:
	@scripts/install-deps.sh conform
	@$(CONFIGURE) $(NO_TESTS)
	@cmake --build $(BUILD_DIR) -j $(JOBS) --target posenc
	@$(BUILD_DIR)/posenc generate --out vectors

# Every transformers model type with rotary code run by its own modeling code and judged against
# posenc's vectors for its config (models/verify/verify_model_types.py): writes docs/models.md and
# the registry --hf-config reads (models/src/model_types.inc). The layouts it writes are measured,
# the verdicts judged by the posenc built before: when the registry changed, posenc is rebuilt
# and the run repeated, so that the verdicts written are those of the posenc that reads it.
VERIFY_MODELS = PYTHONPATH=python/src .venv/bin/python models/verify/verify_model_types.py --cli $(BUILD_DIR)/posenc \
  --json $(BUILD_DIR)/model_types.json --registry models/src/model_types.inc --docs docs/models.md
verify-models:
	@scripts/install-deps.sh peers
	@$(CONFIGURE) $(NO_TESTS)
	@for run in 1 2; do \
	  cmake --build $(BUILD_DIR) -j $(JOBS) --target posenc || exit 1; \
	  cp models/src/model_types.inc $(BUILD_DIR)/model_types.inc.before; \
	  $(VERIFY_MODELS) || exit 1; \
	  cmp -s models/src/model_types.inc $(BUILD_DIR)/model_types.inc.before && break; \
	done
	@cmake --build $(BUILD_DIR) -j $(JOBS) --target posenc

# Every peer (peers/*/run.sh) on every vector file under standard and strict, then the table
# docs/peers.md (generated from their JSON reports, committed) and $(BUILD_DIR)/peers/peers.html.
peers:
	@scripts/install-deps.sh peers
	@$(CONFIGURE) $(NO_TESTS)
	@cmake --build $(BUILD_DIR) -j $(JOBS) --target posenc posenc_llamacpp_plugin
	@peers/run.sh $(BUILD_DIR)/posenc $(BUILD_DIR)/peers
	@cp $(BUILD_DIR)/peers/peers.md docs/peers.md

clean:
	rm -rf $(BUILD_DIR) build-asan build-tsan
