# perfwatch: the commands a developer types. The build itself is CMake.
#   make         build everything into build/
#   make test    unit tests under ASan+UBSan, then integration tests on the dev stack,
#                SANITIZER_TESTS among them on the ASan+UBSan build (integration-test-asan)
#   make demo    start the dev stack and run the job end to end
#   make bench   benchmarks (not part of CI)
#   make bench-cache  the gate's and the watcher's baseline reads with Redis, with Redis
#                stopped and without, as ratios (bench/bench_cache.c; not part of CI)
#   make bench-peers  changepoints beside apache-otava, ruptures and MongoDB's E-divisive,
#                installed from PyPI into run/peers (not part of CI nor of make bench)
#   make bench-canary  the canary's confidence sequence beside Kayenta's judge looked at
#                every window, CANARY_TRIALS simulated canaries a row (not part of CI)
#   make faults  the fault-injection harness's short run (also in make test)
#   make faults-soak  its long run (not part of CI)
#   make fuzz    the libFuzzer targets of bench/fuzz, FUZZ_SECONDS each (not part of CI)
#   make fuzz-ci the same targets 30 s each, one per core (the last step of make test)
#   make deps    apt-get install the Debian packages the project needs
#   make stack-start / stack-stop / stack-status   the dev stack alone

BUILD      ?= build
BUILD_ASAN ?= build-asan
BUILD_FUZZ ?= build-fuzz
FUZZ_SECONDS ?= 600
JOBS       ?= $(shell nproc)
# make test runs this subset of the integration tests on the ASan+UBSan build
# (only there, not twice): it runs every service (test_pager: ingester,
# baseliner, gate, bisector, attributor, pager; test_watcher: the watcher;
# test_canary: the canary, killed -9 and restarted), pw-sim and the perfwatch
# CLI, and the hostile-input tests; a sanitizer report in any process fails it.
SANITIZER_TESTS ?= pager watcher ingest_hostile bisector_inputs canary
CMAKE_FLAGS ?=

.PHONY: all build asan deps deps-check test unit-test integration-test integration-test-asan demo bench bench-cache bench-peers bench-canary fuzz fuzz-ci faults faults-soak \
        stack-start stack-stop stack-status clean

all: build

deps:
	@deploy/dev/deps.sh

# Installs what is missing, silently when nothing is.
deps-check:
	@deploy/dev/deps.sh --check >/dev/null 2>&1 || deploy/dev/deps.sh

build: deps-check
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

asan: deps-check
	@cmake -S . -B $(BUILD_ASAN) -DCMAKE_BUILD_TYPE=Debug -DPW_SANITIZE=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD_ASAN) -j $(JOBS)

unit-test: asan
	@cd $(BUILD_ASAN) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest -L unit -j $(JOBS) --output-on-failure

integration-test: build
	@PW_INTEGRATION_SKIP="$(INTEGRATION_SKIP)" tests/integration/run.sh $(BUILD)

# the build of unit-test; tests/integration/run.sh sees it is a sanitizer build
integration-test-asan: asan
	@tests/integration/run.sh $(BUILD_ASAN) $(SANITIZER_TESTS)

# make test runs SANITIZER_TESTS once, on the sanitizer build
test: INTEGRATION_SKIP = $(SANITIZER_TESTS)
test: unit-test integration-test integration-test-asan fuzz-ci

# the demo builds quietly itself (one line; the log in run/demo/build.log)
demo: deps-check
	@tools/demo.sh $(BUILD)

bench: build
	@bench/run.sh $(BUILD)

# bench/bench_cache.c; PW_CACHE_ROUNDS=N sets its rounds (7)
bench-cache: build
	@bench/run.sh $(BUILD) cache

# bench/peers/peers.py; PEERS_FLAGS passes its options (--per-shape, --points, --seed)
bench-peers: build
	@bench/peers/run.sh $(BUILD) $(PEERS_FLAGS)

# bench/bench_canary.c alone (no dev stack): false rollbacks and power, docs/canary.md
CANARY_TRIALS ?= 1000
bench-canary: build
	@$(BUILD)/bench/bench_canary $(CANARY_TRIALS)

# tests/faults/faults.sh (docs/operations.md, "Fault injection"); PW_FAULTS_SEED=N reproduces a run
faults: build
	@tests/integration/run.sh $(BUILD) faults

faults-soak: build
	@bench/run.sh $(BUILD) faults_soak

# clang-14 with libFuzzer (deploy/dev/packages.txt [fuzz]); bench/fuzz/run.sh prints the figures
fuzz: deps-check
	@cmake -S . -B $(BUILD_FUZZ) -DCMAKE_C_COMPILER=clang-14 -DCMAKE_BUILD_TYPE=Debug -DPW_FUZZ=ON \
	  $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD_FUZZ) -j $(JOBS) --target fuzz_wire fuzz_config fuzz_cli_input fuzz_http_query
	@bench/fuzz/run.sh $(BUILD_FUZZ) $(FUZZ_SECONDS)

# CI: every target fuzzed for 30 s (the seed corpus alone is replayed by the unit tests)
fuzz-ci:
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=30 PW_FUZZ_JOBS=$(JOBS)

stack-start: build
	@deploy/dev/stack.sh start $(BUILD)

stack-stop:
	@deploy/dev/stack.sh stop

stack-status:
	@deploy/dev/stack.sh status

clean:
	rm -rf $(BUILD) $(BUILD_ASAN)
