# The README's two commands:
#   make run    build gpuvet (Release) and run `gpuvet check` on whatever device is there
#   make test   build with ASan/UBSan and run every test (CTest)
# Both install missing build dependencies first (scripts/install-deps.sh).

JOBS ?= $(shell nproc 2>/dev/null || echo 2)
BUILD ?= build
TEST_BUILD ?= build-test
ARGS ?=

.PHONY: all run test deps test-deps build build-test bench fuzz clean

all: build

deps:
	@scripts/install-deps.sh

test-deps:
	@scripts/install-deps.sh --test

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

run: build
	./$(BUILD)/gpuvet check $(ARGS)

build-test: test-deps
	@cmake -S . -B $(TEST_BUILD) -DCMAKE_BUILD_TYPE=Debug -DGPUVET_SANITIZE=ON -DBUILD_TESTING=ON >/dev/null
	@cmake --build $(TEST_BUILD) -j $(JOBS)

test: build-test
	cd $(TEST_BUILD) && ctest --output-on-failure -j $(JOBS)

bench: build
	tests/bench/run.sh $(BUILD)

# A coverage-guided campaign over every parser (docs/fuzzing.md):
#   make fuzz FUZZ_ARGS='--seconds 60'
fuzz: test-deps
	scripts/fuzz-campaign.sh $(FUZZ_ARGS)

clean:
	rm -rf $(BUILD) $(TEST_BUILD)
