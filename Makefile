# Thin wrapper around CMake for the README's two commands:
#   make demo   install missing Debian packages, build, run the main job
#   make test   the same set-up, then every test: a normal build, an
#               ASan+UBSan build, and the threaded tests under TSan
BUILD      ?= build
BUILD_ASAN ?= build-asan
BUILD_TSAN ?= build-tsan
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_ARGS ?=
CTEST_ARGS ?= --output-on-failure --no-tests=error

UXDP_BENCH = $(BUILD)/tools/uxdp-bench/uxdp-bench

.PHONY: all deps build demo test test-normal test-asan test-tsan bench \
	install clean help

all: build

help:
	@echo "make demo      deps + build + uxdp-bench demo"
	@echo "make test      deps + build + all tests (normal, ASan/UBSan, TSan)"
	@echo "make build     configure and build into $(BUILD)/"
	@echo "make bench     the full benchmark (uxdp-bench all)"
	@echo "make install   install libuxdp, headers, uxdp.pc (PREFIX via CMAKE_ARGS)"
	@echo "make clean     remove build directories"

deps:
	@scripts/deps.sh

build: deps
	cmake -S . -B $(BUILD) -DUXDP_WERROR=ON $(CMAKE_ARGS)
	cmake --build $(BUILD) -j$(JOBS)

demo: build
	$(UXDP_BENCH) demo

bench: build
	$(UXDP_BENCH) all

test: test-normal test-asan test-tsan
	@echo "make test: all suites passed"

test-normal: build
	cd $(BUILD) && ctest $(CTEST_ARGS)

test-asan: deps
	cmake -S . -B $(BUILD_ASAN) -DUXDP_WERROR=ON \
		-DUXDP_SANITIZE=address,undefined -DUXDP_BUILD_BENCH=OFF \
		$(CMAKE_ARGS)
	cmake --build $(BUILD_ASAN) -j$(JOBS)
	cd $(BUILD_ASAN) && ASAN_OPTIONS=detect_leaks=1 \
		UBSAN_OPTIONS=print_stacktrace=1 ctest $(CTEST_ARGS)

test-tsan: deps
	cmake -S . -B $(BUILD_TSAN) -DUXDP_WERROR=ON -DUXDP_SANITIZE=thread \
		-DUXDP_BUILD_BENCH=OFF $(CMAKE_ARGS)
	cmake --build $(BUILD_TSAN) -j$(JOBS)
	cd $(BUILD_TSAN) && TSAN_OPTIONS=halt_on_error=1 \
		ctest $(CTEST_ARGS) -L threaded

install: build
	cmake --install $(BUILD)

clean:
	rm -rf $(BUILD) $(BUILD_ASAN) $(BUILD_TSAN)
