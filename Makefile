# hwsig: one entry point. See README.md.
#   make              build userspace (build/hwsigctl) and the BPF programs
#   make run          install what is missing, build, run `hwsigctl stat` for a few seconds
#   make test         every test tier; prints "N passed, N failed"
#   make bench        side-by-side benchmarks (ratios)
#   make fuzz         run each parser fuzzer (FUZZ_SECONDS each)
#   make mutate       plant each bug of tests/mutants/ and check a test catches it (slow)
#   make install      install hwsigctl (PREFIX=/usr/local)
#   make kmod         build hwsig.ko against the running/selected kernel (KDIR=...)
#   make dkms-install register, build and install the module with DKMS

SHELL := /bin/bash
VERSION := $(shell cat VERSION)
JOBS ?= $(shell nproc)
PREFIX ?= /usr/local
BUILD ?= build
FUZZ_SECONDS ?= 60
CMAKE_FLAGS ?=
ifneq ($(HWSIG_WERROR),)
CMAKE_FLAGS += -DHWSIG_WERROR=ON
endif

.PHONY: all deps build run test unit mutate bench fuzz-build fuzz install kmod dkms-install clean

all: build

deps:
	@./scripts/install-deps build

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j$(JOBS)

run: build
	./$(BUILD)/hwsigctl stat --interval 1 --duration 3

# All tiers; each prints its own count, scripts/run-tests sums them.
test:
	@./scripts/install-deps all
	@./scripts/run-tests

unit:
	@cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DHWSIG_SANITIZE=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build build-asan -j$(JOBS)
	@cd build-asan && ctest --output-on-failure -j$(JOBS)

mutate: deps
	@./scripts/install-deps all
	@./scripts/mutate

fuzz-build:
	@cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHWSIG_FUZZ=ON \
		-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ $(CMAKE_FLAGS) >/dev/null
	@cmake --build build-fuzz -j$(JOBS)

fuzz: deps fuzz-build
	@./scripts/run-fuzz build-fuzz/fuzz $(FUZZ_SECONDS)

bench: build
	@./scripts/run-bench $(BUILD)

install: build
	install -D -m 0755 $(BUILD)/hwsigctl $(DESTDIR)$(PREFIX)/sbin/hwsigctl

kmod:
	$(MAKE) -C kmod

dkms-install:
	@./scripts/dkms-install

clean:
	rm -rf build build-asan build-fuzz out
	-$(MAKE) -C kmod clean
