# The two entry points of the README. Each installs what is missing, configures, builds and runs.
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
# OFF skips the HTML report's headless-Chromium test and the browser it needs (~300 MB).
BROWSER_TEST ?= ON
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release

.PHONY: all deps configure build conform test sanitize fuzz bench vectors clean

all: build

deps:
	@POSENC_BROWSER_TEST=$(BROWSER_TEST) scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD_DIR) $(CMAKE_FLAGS) -DPOSENC_BROWSER_TEST=$(BROWSER_TEST) >/dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

# Main job: the conformance suite on the shipped vectors, run on the built-in fast implementation
# (the best ISA path here, or POSENC_ISA) under the strict profile.
conform: build
	@$(BUILD_DIR)/posenc conform --impl fast --profile strict

test: build
	@cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

# ASan+UBSan build running every test (build-asan/), TSan build running the threaded fast tests.
sanitize: deps
	@scripts/sanitizers.sh

# libFuzzer targets (clang) for FUZZ_SECONDS each (60 by default; longer on demand).
FUZZ_SECONDS ?= 60
fuzz: deps
	@FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/fuzz.sh

# Speed of the fast path against copy bandwidth, naive loops and the reference, with a ratio table.
bench: build
	@$(BUILD_DIR)/bench/posenc_bench

# Regenerates the golden vectors and their MANIFEST from the reference (deterministic).
vectors: build
	@$(BUILD_DIR)/posenc generate --out vectors

clean:
	rm -rf $(BUILD_DIR) build-asan build-tsan build-fuzz
