# Thin wrapper around CMake for the README's two commands:
#   make demo   install missing Debian packages, build, run the main job
#   make test   the same set-up, then every test: a normal build, an
#               ASan+UBSan build, the threaded tests under TSan, and a
#               brief run of every fuzzer (tests/fuzz/README.md)
BUILD      ?= build
BUILD_ASAN ?= build-asan
BUILD_TSAN ?= build-tsan
BUILD_FUZZ ?= build-fuzz
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_ARGS ?=
# Tests run $(JOBS) at a time: each test's namespaces, devices and files
# are its own (install_pkgconfig runs alone: RUN_SERIAL).
CTEST_ARGS ?= --output-on-failure --no-tests=error -j$(JOBS)

UXDP_BENCH = $(BUILD)/tools/uxdp-bench/uxdp-bench

# make fuzz: seconds per harness, and which harness (default: all).
FUZZ_SECONDS ?= 60
FUZZ ?=
FUZZ_HARNESSES = umem ring pool xdp prog port xsk rss pcap bpf_check bpf_diff bpf_elf bpf_map

.PHONY: all deps build demo test test-normal test-asan test-tsan test-fuzz \
	fuzz fuzz-build bench soak install clean help

all: build

help:
	@echo "make demo      deps + build + uxdp-bench demo"
	@echo "make test      deps + build + all tests (normal, ASan/UBSan, TSan,"
	@echo "               and a brief run of every fuzzer)"
	@echo "make fuzz      run the fuzzers, FUZZ_SECONDS=$(FUZZ_SECONDS) each"
	@echo "               (FUZZ=name for one: $(FUZZ_HARNESSES))"
	@echo "make build     configure and build into $(BUILD)/"
	@echo "make bench     the full benchmark (uxdp-bench all)"
	@echo "make soak      10^9 packets through churn (SOAK_PACKETS=N)"
	@echo "make install   install libuxdp, headers, uxdp.pc [PREFIX=DIR] [DESTDIR=DIR]"
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

test: test-normal test-asan test-tsan test-fuzz
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

# libFuzzer needs clang: a build of its own, configured with CC=clang.
fuzz-build: deps
	CC=clang cmake -S . -B $(BUILD_FUZZ) -DUXDP_WERROR=ON -DUXDP_FUZZ=ON \
		-DUXDP_BUILD_BENCH=OFF -DBUILD_TESTING=OFF $(CMAKE_ARGS)
	cmake --build $(BUILD_FUZZ) -j$(JOBS)

# Each harness over its committed corpus plus a bounded number of
# mutations (UXDP_FUZZ_RUNS in tests/fuzz/CMakeLists.txt), fixed seed.
test-fuzz: fuzz-build
	cd $(BUILD_FUZZ) && ctest $(CTEST_ARGS) -L fuzz

# Real fuzzing: FUZZ_SECONDS per harness, random seed, growing a corpus in
# $(BUILD_FUZZ)/fuzz-work/<name>/corpus (the committed one is only read).
fuzz: fuzz-build
	@rc=0; for h in $(or $(FUZZ),$(FUZZ_HARNESSES)); do \
		if [ ! -x $(BUILD_FUZZ)/tests/fuzz/fuzz_$$h ]; then \
			echo "fuzz: no harness '$$h' (have: $(FUZZ_HARNESSES))"; \
			rc=2; continue; \
		fi; \
		tests/fuzz/run.sh long $(BUILD_FUZZ)/tests/fuzz/fuzz_$$h \
			tests/fuzz/corpus/$$h $(BUILD_FUZZ)/fuzz-work/$$h \
			$(FUZZ_SECONDS) || rc=1; \
	done; exit $$rc

# The soak: polling threads, small to large rings, budgets 1..1024, bulk 1
# and 16, program swaps, down/up, destroy and queue-move churn under traffic,
# every packet accounted for and every buffer audited
# (tools/uxdp-bench/soak.c).
SOAK_PACKETS ?= 1G
soak: build
	$(UXDP_BENCH) soak -n $(SOAK_PACKETS)

# PREFIX and DESTDIR as packagers expect; CMAKE_INSTALL_PREFIX works too.
PREFIX  ?=
DESTDIR ?=
install: build
	$(if $(DESTDIR),DESTDIR=$(DESTDIR)) cmake --install $(BUILD) \
		$(if $(PREFIX),--prefix $(PREFIX))

clean:
	rm -rf $(BUILD) $(BUILD_ASAN) $(BUILD_TSAN) $(BUILD_FUZZ)
