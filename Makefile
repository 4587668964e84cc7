# hwsig: one entry point. See README.md.
#   make              build userspace (build/hwsigctl) and the BPF programs
#   make run          install what is missing, build hwsigctl only, run `hwsigctl stat` for a few seconds
#   make test         every test tier; prints "N passed, N failed"
#   make check        the everyday loop, minutes from a warm build: the unit tier under
#                     ASan+UBSan and a few seconds of each fuzzer; prints "N passed, N failed"
#   make bench        side-by-side benchmarks (ratios)
#   make fuzz         run each parser fuzzer (FUZZ_SECONDS each)
#   make mutate       plant each bug of tests/mutants/ and check a test catches it (slow)
#   make install      install hwsigctl, hwsigd, the unit, the config, the man pages
#                     (PREFIX=/usr/local, DESTDIR=); make uninstall removes them
#   make deb          hwsig_<VERSION>_amd64.deb and hwsig-dkms_<VERSION>_all.deb in out/deb/
#   make kmod         build hwsig.ko against the running/selected kernel (KDIR=...)
#   make dkms-install register, build and install the module with DKMS

SHELL := /bin/bash
# cmake's generated makefiles run make recursively: no "Entering directory"
# chatter from them (or from kmod's kbuild call).
MAKEFLAGS += --no-print-directory
VERSION := $(shell cat VERSION)
JOBS ?= $(shell nproc)
PREFIX ?= /usr/local
BUILD ?= build
FUZZ_SECONDS ?= 60
CHECK_FUZZ_SECONDS ?= 3
CMAKE_FLAGS ?=
# A rebuild after switching branches or build directories mostly hits the
# compiler cache (CCACHE= turns it off).
CCACHE ?= $(if $(shell command -v ccache),ccache)
ifneq ($(CCACHE),)
CMAKE_FLAGS += -DCMAKE_C_COMPILER_LAUNCHER=$(CCACHE) -DCMAKE_CXX_COMPILER_LAUNCHER=$(CCACHE)
endif
ifneq ($(HWSIG_WERROR),)
CMAKE_FLAGS += -DHWSIG_WERROR=ON
endif

.PHONY: all deps build build-bin build-ctl man run test test-debug-kernel unit unit-build check mutate bench fuzz-build fuzz install uninstall deb kmod dkms-install clean

all: build

deps:
	@./scripts/install-deps build

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j$(JOBS)

# Only what it runs: the tests and benches are built by `make test` / `make bench`.
run: build-ctl
	@./$(BUILD)/hwsigctl stat --interval 1 --duration 3

build-ctl: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j$(JOBS) --target hwsigctl

# All tiers; each prints its own count, scripts/run-tests sums them.
test:
	@./scripts/install-deps all
	@./scripts/run-tests

# The debug-kernel tier alone (KASAN, lockdep...; builds its kernel once).
test-debug-kernel:
	@./scripts/install-deps all
	@./scripts/vm-test-debug

unit: unit-build
	@cd build-asan && ctest --output-on-failure -j$(JOBS)

unit-build:
	@cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DHWSIG_SANITIZE=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build build-asan -j$(JOBS)

# `make test`'s unit tier (ASan+UBSan) and its fuzz smoke with
# CHECK_FUZZ_SECONDS per fuzzer; scripts/run-tests --count reads each log's
# count, as `make test` does. CHECK_CTEST_FLAGS narrows the tests (ctest's
# -R/-E on the test names, e.g. -R prometheus).
CHECK_CTEST_FLAGS ?=
check: deps unit-build fuzz-build
	@logs=$$(mktemp -d); trap 'rm -rf "$$logs"' EXIT; \
	(cd build-asan && ctest --output-on-failure -j$(JOBS) $(CHECK_CTEST_FLAGS)) 2>&1 | tee "$$logs/unit"; \
	./scripts/run-fuzz build-fuzz/fuzz $(CHECK_FUZZ_SECONDS) 2>&1 | tee "$$logs/fuzz"; \
	read -r up uf < <(./scripts/run-tests --count "$$logs/unit"); \
	read -r fp ff < <(./scripts/run-tests --count "$$logs/fuzz"); \
	echo "check: unit $$up passed, $$uf failed; fuzz $$fp passed, $$ff failed"; \
	echo "$$((up + fp)) passed, $$((uf + ff)) failed"; \
	[ $$((uf + ff)) -eq 0 ]

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

# What `make install` and `make deb` ship. The unit goes where systemd looks
# for it: /lib/systemd/system for PREFIX=/usr (Debian's place), else
# $(PREFIX)/lib/systemd/system; the configuration is always /etc/hwsig.
SBINDIR = $(PREFIX)/sbin
MANDIR = $(PREFIX)/share/man/man8
ifeq ($(PREFIX),/usr)
UNITDIR ?= /lib/systemd/system
else
UNITDIR ?= $(PREFIX)/lib/systemd/system
endif
CONFDIR ?= /etc/hwsig
# Documentation/'s pages (text and HTML) and the rules and dashboards:
# where the programs' messages say they are (HWSIG_DOC_DIR of the build).
DOCDIR ?= $(PREFIX)/share/doc/hwsig
DATADIR ?= $(PREFIX)/share/hwsig
CONF_SRC := userspace/daemon/hwsigd.conf
UNIT_SRC := userspace/daemon/hwsigd.service
MAN_PAGES := $(BUILD)/man/hwsigctl.8 $(BUILD)/man/hwsigd.8

# Only the two programs (not the tests, fuzzers, benchmarks).
build-bin: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHWSIG_DOC_DIR=$(DOCDIR) $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j$(JOBS) --target hwsigctl hwsigd

man: $(MAN_PAGES)

$(BUILD)/man/%.8: Documentation/%.rst VERSION packaging/rst2man8
	@mkdir -p $(@D)
	./packaging/rst2man8 $< $@ $(VERSION)

install: build-bin man
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(UNITDIR) $(DESTDIR)$(MANDIR) $(DESTDIR)$(CONFDIR)
	install -m 0755 -s $(BUILD)/hwsigctl $(BUILD)/hwsigd $(DESTDIR)$(SBINDIR)/
	sed 's|^ExecStart=/usr/sbin/hwsigd|ExecStart=$(SBINDIR)/hwsigd|' $(UNIT_SRC) >$(BUILD)/hwsigd.service
	install -m 0644 $(BUILD)/hwsigd.service $(DESTDIR)$(UNITDIR)/hwsigd.service
	install -m 0644 $(MAN_PAGES) $(DESTDIR)$(MANDIR)/
	./packaging/install-docs $(DESTDIR)$(DOCDIR) $(DESTDIR)$(DATADIR)
	@if [ -e $(DESTDIR)$(CONFDIR)/hwsigd.conf ]; then \
		echo "install: keeping the existing $(DESTDIR)$(CONFDIR)/hwsigd.conf"; \
	else \
		echo "install -m 0644 $(CONF_SRC) $(DESTDIR)$(CONFDIR)/hwsigd.conf"; \
		install -m 0644 $(CONF_SRC) $(DESTDIR)$(CONFDIR)/hwsigd.conf; \
	fi
	@if [ -z "$(DESTDIR)" ]; then \
		getent group hwsig >/dev/null || echo "install: create the group first: addgroup --system hwsig"; \
		echo "install: then: systemctl daemon-reload && systemctl enable --now hwsigd"; \
	fi

# Removes what install put, except a configuration file that was changed.
uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/hwsigctl $(DESTDIR)$(SBINDIR)/hwsigd
	rm -f $(DESTDIR)$(UNITDIR)/hwsigd.service
	rm -f $(DESTDIR)$(MANDIR)/hwsigctl.8 $(DESTDIR)$(MANDIR)/hwsigd.8
	rm -rf $(DESTDIR)$(DOCDIR) $(DESTDIR)$(DATADIR)
	@if [ -e $(DESTDIR)$(CONFDIR)/hwsigd.conf ]; then \
		if cmp -s $(CONF_SRC) $(DESTDIR)$(CONFDIR)/hwsigd.conf; then \
			echo "rm -f $(DESTDIR)$(CONFDIR)/hwsigd.conf"; rm -f $(DESTDIR)$(CONFDIR)/hwsigd.conf; \
		else \
			echo "uninstall: keeping $(DESTDIR)$(CONFDIR)/hwsigd.conf: it was changed"; \
		fi; \
	fi
	-@rmdir $(DESTDIR)$(CONFDIR) 2>/dev/null || true

deb: build-bin man
	@./packaging/build-deb $(BUILD) out/deb

# Without headers for the kernel, say which package brings them (as
# scripts/dkms-install does) rather than kbuild's raw error.
KERNELRELEASE_RUNNING := $(shell uname -r)
kmod:
	@if [ -z "$(KDIR)" ] && [ ! -e /lib/modules/$(KERNELRELEASE_RUNNING)/build/Makefile ]; then \
		echo "make kmod: no kernel headers for the running kernel $(KERNELRELEASE_RUNNING) (/lib/modules/$(KERNELRELEASE_RUNNING)/build)" >&2; \
		echo "make kmod: install them: apt-get install linux-headers-$(KERNELRELEASE_RUNNING)" >&2; \
		echo "make kmod: or build against other headers: make kmod KDIR=/lib/modules/<release>/build" >&2; \
		exit 1; \
	fi
	@if [ -n "$(KDIR)" ] && [ ! -e "$(KDIR)/Makefile" ]; then \
		echo "make kmod: KDIR=$(KDIR) holds no kernel headers (no Makefile there)" >&2; \
		echo "make kmod: headers for a Debian kernel <release>: apt-get install linux-headers-<release>" >&2; \
		exit 1; \
	fi
	$(MAKE) -C kmod $(if $(KDIR),KDIR=$(KDIR))

dkms-install:
	@./scripts/dkms-install

clean:
	rm -rf build build-asan build-fuzz out
	-$(MAKE) -C kmod clean
