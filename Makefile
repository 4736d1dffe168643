# Quick start:  make run   (build, then benchmark a built-in example)
#               make test  (normal + sanitizer builds, ctest on both)
#               make bench [ARGS=--quick]  (benchmark suite vs peers: bench/README.md)
# Other targets: make build, make install [PREFIX=...], make clean.
JOBS   ?= $(shell nproc)
PREFIX ?= /usr/local
CMAKE_FLAGS ?=

.PHONY: run test build build-asan install deps clean bench python-test

deps:
	@./scripts/deps.sh

build: deps
	cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=$(PREFIX) $(CMAKE_FLAGS)
	cmake --build build -j $(JOBS)

# Sanitizers and nvcc-compiled device code do not mix; the sanitizer build
# checks the host code, the GPU tests run on the device machine.
build-asan: deps
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DBSRMV_SANITIZE=ON -DBSRMV_CUDA=OFF $(CMAKE_FLAGS)
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
	rm -rf build build-asan build-python
