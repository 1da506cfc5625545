# The README's two commands:
#   make run    build gpuvet (Release) and run `gpuvet check` on whatever device is there
#   make test   build with ASan/UBSan and run every test (CTest), showing what the fixture
#               scripts build meanwhile (tests/fixtures/progress.sh)
# Both install missing build dependencies first (scripts/install-deps.sh).
# The binary is build/gpuvet; to put it on PATH:
#   make install   the Release build into $(PREFIX) (default /usr/local; DESTDIR honoured):
#                  bin/gpuvet, the man page, the bash completion
#   make uninstall removes what the last `make install` wrote (build/install_manifest.txt)
#   make deb       build/gpuvet_VERSION_ARCH.deb (CPack, cmake/Package.cmake)

JOBS ?= $(shell nproc 2>/dev/null || echo 2)
BUILD ?= build
TEST_BUILD ?= build-test
ARGS ?=
PREFIX ?= /usr/local
DESTDIR ?=

.PHONY: all run test deps test-deps build build-test bench fuzz clean install uninstall deb

all: build

deps:
	@scripts/install-deps.sh

test-deps:
	@scripts/install-deps.sh --test

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

install: build
	DESTDIR="$(DESTDIR)" cmake --install $(BUILD) --prefix "$(PREFIX)"

uninstall:
	@test -f $(BUILD)/install_manifest.txt || { echo "nothing to uninstall: no $(BUILD)/install_manifest.txt" >&2; exit 1; }
	@while IFS= read -r f || [ -n "$$f" ]; do rm -fv -- "$(DESTDIR)$$f"; done <$(BUILD)/install_manifest.txt

# dpkg-shlibdeps (package dpkg-dev) derives Depends from what the binary links
deb: build
	@command -v dpkg-shlibdeps >/dev/null || { echo "make deb needs dpkg-shlibdeps: apt-get install dpkg-dev" >&2; exit 1; }
	@cd $(BUILD) && cpack -G DEB
	@echo "the package: $$(ls $(BUILD)/gpuvet_*.deb)"

run: build
	./$(BUILD)/gpuvet check $(ARGS)

build-test: test-deps
	@cmake -S . -B $(TEST_BUILD) -DCMAKE_BUILD_TYPE=Debug -DGPUVET_SANITIZE=ON -DBUILD_TESTING=ON >/dev/null
	@cmake --build $(TEST_BUILD) -j $(JOBS)

# The Release build too: tests/cli/install_deb.sh packages it. ctest runs under
# tests/fixtures/progress.sh, which shows on the console what the fixture scripts build.
test: build build-test
	cd $(TEST_BUILD) && GV_RELEASE_BUILD=$(abspath $(BUILD)) $(CURDIR)/tests/fixtures/progress.sh ctest --output-on-failure -j $(JOBS)

bench: build
	tests/bench/run.sh $(BUILD)

# A coverage-guided campaign over every parser (docs/fuzzing.md):
#   make fuzz FUZZ_ARGS='--seconds 60'
fuzz: test-deps
	scripts/fuzz-campaign.sh $(FUZZ_ARGS)

clean:
	rm -rf $(BUILD) $(TEST_BUILD)
