# Quick start:  make run   (build, then benchmark a built-in example)
#               make test  (normal + sanitizer builds, ctest on both)
#               make bench [ARGS=--quick]  (benchmark suite vs peers: bench/README.md)
# Other targets: make build, make install [PREFIX=...], make clean.
JOBS   ?= $(shell nproc)
PREFIX ?= /usr/local
CMAKE_FLAGS ?=

.PHONY: run test build build-asan install deps clean bench fuzz test-tsan python-test

deps:
	@./scripts/deps.sh

build: deps
	cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=$(PREFIX) $(CMAKE_FLAGS)
	cmake --build build -j $(JOBS)

# Sanitizers and nvcc-compiled device code do not mix; the sanitizer build
# checks the host code, the GPU tests run on the device machine.
build-asan: deps
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DBSRMV_SANITIZE=ON -DBSRMV_CUDA=OFF \
	  -DBSRMV_FAULT_INJECTION=ON $(CMAKE_FLAGS)
	cmake --build build-asan -j $(JOBS)

run: build
	./build/bsrmv bench --example

test: build build-asan
	cd build && ctest --output-on-failure -j $(JOBS)
	cd build-asan && ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 ctest --output-on-failure -j $(JOBS)
	./scripts/python_test.sh

install: build
	cmake --install build

# CPU suite here (GPU machine: bench/suite.sh --gpu); builds its own
# build-bench/ and the peers, writes bench/results/, plots, docs/RESULTS.md.
bench: deps
	bench/suite.sh $(ARGS)

# The Python package's build and tests alone (also run by `make test`).
python-test: deps
	./scripts/python_test.sh

clean:
	rm -rf build build-asan build-tsan build-fuzz build-python

# Each fuzz target (fuzz/) for FUZZ_SECONDS on a copy of its seed corpus;
# skipped without clang.  Longer runs: scripts/fuzz_campaign.sh.
FUZZ_SECONDS ?= 20
FUZZ_TARGETS ?= mmio parse bsr convert plan storage solve
fuzz: deps
	@./scripts/deps_clang.sh
	@if ! command -v clang >/dev/null; then echo "fuzz: no clang, skipped"; exit 0; fi; \
	set -e; CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DBSRMV_CUDA=OFF -DBSRMV_FUZZ=ON -DBUILD_TESTING=OFF >/dev/null; \
	cmake --build build-fuzz -j $(JOBS) --target $(addprefix fuzz_,$(FUZZ_TARGETS)); \
	for t in $(FUZZ_TARGETS); do \
	  rm -rf build-fuzz/ci/$$t; mkdir -p build-fuzz/ci/$$t; cp fuzz/corpus/$$t/* build-fuzz/ci/$$t/; \
	  (cd build-fuzz/ci && OMP_NUM_THREADS=2 ../fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) \
	    -timeout=30 -print_final_stats=1 -artifact_prefix=$$t- $$t >$$t.log 2>&1) || \
	    { tail -40 build-fuzz/ci/$$t.log; exit 1; }; \
	  echo "fuzz_$$t: $$(grep -o 'number_of_executed_units: [0-9]*' build-fuzz/ci/$$t.log | \
	    awk '{print $$2}') executions in $(FUZZ_SECONDS) s, no failure"; \
	done

# ThreadSanitizer (clang, with LLVM's OpenMP runtime and its TSan support,
# Archer, so OpenMP's own synchronisation is understood): the thread test
# and the SpMV and solver tests.
TSAN_TESTS = test_threads test_spmv test_solve test_solve_multi
test-tsan: deps
	@./scripts/deps_clang.sh
	@archer=$$(ls /usr/lib/llvm-*/lib/libarcher.so 2>/dev/null | head -1); \
	if ! command -v clang >/dev/null || [ -z "$$archer" ]; then \
	  echo "test-tsan: needs clang and libomp's libarcher.so (libomp-dev), skipped"; exit 0; fi; \
	set -e; CC=clang cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DBSRMV_CUDA=OFF -DBSRMV_TSAN=ON >/dev/null; \
	cmake --build build-tsan -j $(JOBS) --target $(TSAN_TESTS); \
	cd build-tsan && OMP_TOOL_LIBRARIES=$$archer TSAN_OPTIONS="ignore_noninstrumented_modules=1 halt_on_error=1" \
	  ctest --output-on-failure -j $(JOBS) -R '^($(subst $(eval) ,|,$(TSAN_TESTS)))$$'
