SHELL := /bin/bash
# The two commands a new user needs: `make run` (the demo) and `make test` (everything CI checks).
# Both install what is missing first (tools/deps.sh).
# `make install PREFIX=DIR` installs the Release build (docs/install.md); `make deb` packages it.
.PHONY: all deps build install deb run test test-release test-asan test-tsan test-python test-configs bench-smoke fuzz fuzz-smoke format clean \
        tree-asan tree-tsan tree-minimal tree-partial tree-fuzz tree-bench-peers

BUILD   ?= build
JOBS    ?= $(shell nproc)
VENV    := .venv
CMAKE   := cmake -G Ninja -S .
# ctest with the slots that keep the ROS tests one at a time, JOBS tests at a time and two more
# parallel slots for the two tests that run beside them (cmake/TaktTestResources.cmake)
CTEST   := ctest --resource-spec-file $(CURDIR)/cmake/ctest-resources.json
CTEST_J := $(shell echo $$(( $(JOBS) + 2 )))
export TAKT_BUILD_DIR := $(CURDIR)/$(BUILD)/release

all: build

deps:
	@tools/deps.sh

build: deps
	@$(CMAKE) -B $(BUILD)/release -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(BUILD)/release -j $(JOBS)

PREFIX  ?= /usr/local
install: build
	@cmake --install $(BUILD)/release --prefix $(PREFIX)

deb: build
	@cd $(BUILD)/release && cpack -G DEB

run: build
	@$(VENV)/bin/takt demo --out $(BUILD)/demo

# `make test`: the suites below one after another (tools/make_test.sh), the later suites' build
# trees built meanwhile in the background at SCHED_IDLE, on the CPU time the running suite leaves
# idle (a test waiting for its peers, a serial test on one CPU); a suite whose tree is not built
# yet builds it in the foreground. The first suite that fails ends the run.
test: build
	@tools/make_test.sh "$(MAKE)" $(BUILD)
	@echo "make test: all suites passed (release, asan+ubsan, tsan, python, minimal and partial configurations, libFuzzer smoke, bench smoke)"

test-release: build
	@echo "== tests: Release"
	@$(CTEST) --test-dir $(BUILD)/release --output-on-failure -j $(CTEST_J)

# The other build trees: tree-NAME configures and builds BUILD/NAME with config_NAME
config_asan    := -DCMAKE_BUILD_TYPE=Debug -DTAKT_DEBUG=ON -DTAKT_SANITIZE=address,undefined
config_tsan    := -DCMAKE_BUILD_TYPE=Debug -DTAKT_SANITIZE=thread -DTAKT_BUILD_TOOLS=OFF
# compile-time configurations (include/takt/features.h): the minimal one (timers and executors
# only) and one without some validation kinds and profiling; the generated messages do not
# depend on them (the asan tree tests those)
config_minimal := -DCMAKE_BUILD_TYPE=Debug -DTAKT_SANITIZE=address,undefined -DTAKT_BUILD_MESSAGES=OFF \
                  -DTAKT_WITH_PUBSUB=OFF -DTAKT_WITH_RPC=OFF -DTAKT_WITH_SYNC=OFF -DTAKT_WITH_TIMING=OFF \
                  -DTAKT_WITH_PROFILING=OFF
config_partial := -DCMAKE_BUILD_TYPE=Debug -DTAKT_SANITIZE=address,undefined -DTAKT_BUILD_MESSAGES=OFF \
                  -DTAKT_WITH_TIMING_JITTER=OFF -DTAKT_WITH_TIMING_RATE=OFF -DTAKT_WITH_RPC_JITTER=OFF \
                  -DTAKT_WITH_PROFILING=OFF
config_fuzz    := -DCMAKE_BUILD_TYPE=Debug -DTAKT_LIBFUZZER=ON -DTAKT_SANITIZE=address,undefined \
                  -DTAKT_BUILD_TESTS=ON
FUZZ_TARGETS   := fuzz_system_file fuzz_frame fuzz_daemon_rx fuzz_msg_ros1 fuzz_msg_cdr fuzz_xmlrpc_request \
                  fuzz_xmlrpc_response fuzz_tcpros_header fuzz_ros1_master fuzz_bridge_description
tree-asan tree-tsan tree-minimal tree-partial:
	@$(CMAKE) -B $(BUILD)/$(@:tree-%=%) $(config_$(@:tree-%=%)) >/dev/null
	@cmake --build $(BUILD)/$(@:tree-%=%) -j $(JOBS)
# the programs `takt bench ros1` builds against Debian's roscpp at its first run, built ahead
tree-bench-peers:
	@$(VENV)/bin/python -c "from takt.bench.ros1 import roscpp_program; \
	  import sys; sys.exit(any(roscpp_program(p)[0] is None for p in ('roscpp_bench', 'roscpp_chains')))"
tree-fuzz:
	@CC=clang CXX=clang++ $(CMAKE) -B $(BUILD)/fuzz $(config_fuzz) >/dev/null
	@cmake --build $(BUILD)/fuzz -j $(JOBS) --target $(FUZZ_TARGETS)
	@# the DDS receive path, when the DDS layer and the ROS 2 types are built (docs/dds.md)
	@if cmake --build $(BUILD)/fuzz --target help | grep -q fuzz_dds_rx; then \
	  cmake --build $(BUILD)/fuzz -j $(JOBS) --target fuzz_dds_rx; fi

test-asan: deps tree-asan
	@echo "== tests: Debug + AddressSanitizer + UndefinedBehaviorSanitizer"
	@ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  $(CTEST) --test-dir $(BUILD)/asan --output-on-failure -j $(CTEST_J)
	@echo "== tests: Python suites against the sanitized runner"
	@# (not the release_pass tests: they check nothing the sanitizers see; test-python runs them;
	@# JOBS at a time, as there)
	@ASAN_OPTIONS=detect_leaks=1 TAKT_BUILD_DIR=$(CURDIR)/$(BUILD)/asan \
	  $(VENV)/bin/python -m pytest -q -n $(JOBS) python/tests -m "not release_pass"

test-tsan: deps tree-tsan
	@echo "== tests: ThreadSanitizer"
	@TSAN_OPTIONS=halt_on_error=1 $(CTEST) --test-dir $(BUILD)/tsan --output-on-failure -j $(CTEST_J)

# the Python suites run JOBS tests at a time (pytest-xdist): each test has its own temporary
# directory, introspection directory and ports
test-python: build
	@echo "== tests: Python (CLI, system files, runner)"
	@$(VENV)/bin/python -m pytest -q -n $(JOBS) python/tests

# the compile-time configurations (config_minimal, config_partial), each with the tests that apply
test-configs: deps tree-minimal tree-partial
	@echo "== tests: minimal configuration (ASan+UBSan)"
	@$(CTEST) --test-dir $(BUILD)/minimal --output-on-failure -j $(CTEST_J)
	@echo "== tests: partial configuration (ASan+UBSan)"
	@# (not the roscpp examples: their programs are compiled in the test, and nothing of them
	@# uses the features switched off here; the three suites above run them)
	@$(CTEST) --test-dir $(BUILD)/partial --output-on-failure -j $(CTEST_J) -E '^test_roscpp_examples(_build)?$$'

# the benchmarks `make test` runs in their --quick mode, in lanes side by side (tools/bench_smoke.sh):
# a smoke run checks that each runs and writes its result, its numbers mean nothing. Most of a
# smoke run waits (periods, peers' start-up), so lanes of about a minute each share 2 CPUs (ros1,
# the longest, alone)
BENCH_SMOKE_LANES = "pods rosrt tide_overhead urt detection serialize trace" "ros1" "shm frames scale dds"
# the firmware's (QEMU, when it is built) in a lane of its own: it mostly waits on its paced line
BENCH_SMOKE_MCU   = $(if $(wildcard $(BUILD)/release/fw/mps2-an500/takt-fw-bench-pods.elf),$(if $(shell command -v qemu-system-arm),"pods:--mcu"))

bench-smoke: build
	@echo "== benchmarks: smoke mode"
	@tools/bench_smoke.sh $(VENV)/bin/takt $(BUILD)/bench-smoke $(BENCH_SMOKE_LANES) $(BENCH_SMOKE_MCU)
	@$(VENV)/bin/takt sizes >/dev/null && echo "sizes: ok"

# Coverage-guided fuzzing with clang's libFuzzer and ASan+UBSan, FUZZ_SECONDS per target
# (`make fuzz FUZZ_SECONDS=600` for a long run), FUZZ_JOBS targets at a time (tools/fuzz_run.sh).
# `make test` runs it for 4 s per target.
FUZZ_SECONDS ?= 60
FUZZ_JOBS    ?= $(JOBS)
fuzz-smoke:
	@echo "== fuzzing: libFuzzer, 4 s per target"
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=4 2>&1 | grep -E "^(Done|==|SUMMARY|ERROR)|crash" ; \
	  test $${PIPESTATUS[0]} -eq 0
fuzz: deps tree-fuzz
	@tools/fuzz_run.sh $(BUILD) $(FUZZ_SECONDS) $(FUZZ_JOBS)

format:
	@clang-format -i $$(git ls-files '*.c' '*.h' '*.cpp' '*.hpp')

clean:
	rm -rf $(BUILD)
