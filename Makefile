# itrace build driver (DESIGN.md section 3).  The repository is an overlay on
# Linux 6.12 (root) and QEMU 7.2 (tools/testing/itrace/qemu/); all output goes
# to build/.
#
#   make            packages, base trees, overlay, kernel, QEMU, tools
#   make run        trace a demo program under emulated Intel PT, decode it
#   make check      every test; last line "N passed, N failed"
#   make fuzz       FUZZ_MINUTES of random itrace uAPI sequences in a guest
#   make refresh    regenerate *.patch from edits in build/linux, build/qemu
#   make refresh-check   fail if the build trees hold edits not in the repo
#   make bench      benchmarks (ratios)
#   make series     export the kernel series (the patch stack) and the test
#                   bed as git format-patch files; fail on drift
#   make series-edit, make series-save   edit the patch stack with git
#   make series-check   every step of the kernel series built and checked
#   make install    the itrace tool, its man pages and JSON schema
#                   [DESTDIR=...] [PREFIX=/usr/local]

TOP   := $(CURDIR)
BUILD := $(TOP)/build
T     := $(TOP)/tools/testing/itrace
S     := $(T)/scripts
include $(T)/versions.mk
export BUILD LINUX_PKG_VERSION QEMU_SRC_VERSION
# ccache hits across clones in other folders (CI's fresh clone).
export CCACHE_BASEDIR := $(TOP)
export CCACHE_NOHASHDIR := 1

KOBJ    := $(BUILD)/linux-obj
BZIMAGE := $(KOBJ)/arch/x86/boot/bzImage
QEMU    := $(BUILD)/qemu-obj/qemu-system-x86_64
KFRAG   := $(T)/config/itrace-test.config
KREQ    := $(T)/config/required.txt
STAMPS  := $(BUILD)/stamps
JOBS    ?= $(shell nproc)

.PHONY: all deps linux-src qemu-src overlay kernel kheaders qemu tools initramfs \
	run check fuzz install refresh refresh-check bench bench-kernel series \
	series-check series-edit series-save clean FORCE

all: kernel qemu tools initramfs

$(STAMPS)/deps: $(S)/deps.sh
	@$(S)/deps.sh
	@mkdir -p $(STAMPS) && touch $@
deps: $(STAMPS)/deps

linux-src: deps
	@$(S)/prepare-linux.sh
qemu-src: deps
	@$(S)/prepare-qemu.sh

# The overlay is re-applied on every run; only changed patches touch files.
overlay: linux-src qemu-src
	@$(S)/overlay.sh $(TOP) $(BUILD)/linux linux tools/testing/itrace/qemu/ \
		tools/testing/itrace/series/kernel/
	@$(S)/overlay.sh $(T)/qemu $(BUILD)/qemu qemu

$(KOBJ)/.config: $(KFRAG) $(KREQ) $(S)/kconfig.sh | linux-src
	@echo "  KCONFIG $(KOBJ)/.config"
	@flock $(BUILD)/.kernel.lock $(S)/kconfig.sh $(KOBJ) $(KFRAG) $(KREQ)

kernel: overlay $(KOBJ)/.config
	@echo "  KERNEL  bzImage"
	@flock $(BUILD)/.kernel.lock $(MAKE) -s -C $(BUILD)/linux O=$(KOBJ) \
		CC="ccache gcc" -j$(JOBS) bzImage
	@test -f $(BZIMAGE)

qemu: overlay
	@echo "  QEMU    x86_64-softmmu"
	@flock $(BUILD)/.qemu.lock $(S)/build-qemu.sh

# The kselftests build inside the kernel tree (they include ../lib.mk and
# ../kselftest_harness.h) against the patched uAPI headers.
#
# Upstream's perf_events selftests are the "old binaries": the sources of
# the base tree (with one test fix for upstream: remove_on_exec reaps the
# children it kills, patch 1 of tools/testing/itrace/series/kernel/), built against the
# C library's uAPI headers (Debian's linux-libc-dev), which know nothing of
# this series.  mmap maps the classic
# AUX area at aux_offset of an intel_pt event.  All of them are built (the
# list of their Makefile in the base commit: perf-events-tests.sh, which
# series-check.sh uses too) and the guest runs every binary in
# build/selftests/perf_events (tools/testing/itrace/guest/perf-events.sh):
#   sigtrap_threads  signal_stress_with_disable (hardware breakpoints, no
#                    AUX) needs longer than the harness's 30 s per test
#                    under TCG with the debug kernel: the guest raises the
#                    per-test timeout (tools/testing/itrace/perf_events/
#                    ksft-timeout.c)
#   remove_on_exec   counts PERF_TYPE_HARDWARE instructions: it runs when
#                    the guest CPU can open that event, else it is reported
#                    skipped with the reason (perf_events/hw-counter-probe)
# (TEST_GEN_PROGS is given with full paths: a command-line value overrides
# the OUTPUT prefix lib.mk would add.)
# The series' own tests there (aux_fixes, of its two AUX fixes: those the
# patched Makefile adds) use aux_pause, which the C library's headers lack,
# so they are built against the kernel's, and the guest runs them with the
# others.  (Recursive: build/linux exists only once the recipe runs.)
PERF_EVENTS_TESTS = $(shell $(S)/perf-events-tests.sh --upstream $(BUILD)/linux)
PERF_EVENTS_NEW_TESTS = $(shell $(S)/perf-events-tests.sh --new $(BUILD)/linux $(BUILD)/linux)
# The user tool only (it needs no kernel build): the kernel and QEMU are
# test beds, not installed.
install: deps
	@$(MAKE) -s -C $(TOP)/tools/itrace O=$(BUILD)/tools/itrace install

tools: deps kheaders
	@$(MAKE) -s -C $(TOP)/tools/itrace O=$(BUILD)/tools/itrace
	@$(MAKE) -s -C $(T)/progs O=$(BUILD)/progs
	@$(MAKE) -s -C $(T)/fuzz O=$(BUILD)/tools/fuzz \
		KHDR_INCLUDES="-isystem $(KOBJ)/usr/include"
	@$(MAKE) -s -C $(T)/perf_events O=$(BUILD)/tools/perf_events
	@mkdir -p $(BUILD)/selftests/itrace
	@$(MAKE) -s -C $(BUILD)/linux/tools/testing/selftests/itrace \
		OUTPUT=$(BUILD)/selftests/itrace \
		KHDR_INCLUDES="-isystem $(KOBJ)/usr/include"
	@mkdir -p $(BUILD)/selftests/perf_events
	@$(MAKE) -s -C $(BUILD)/linux/tools/testing/selftests/perf_events \
		OUTPUT=$(BUILD)/selftests/perf_events KHDR_INCLUDES= \
		TEST_GEN_PROGS="$(PERF_EVENTS_TESTS:%=$(BUILD)/selftests/perf_events/%)"
	@$(MAKE) -s -C $(BUILD)/linux/tools/testing/selftests/perf_events \
		OUTPUT=$(BUILD)/selftests/perf_events \
		KHDR_INCLUDES="-isystem $(KOBJ)/usr/include" \
		TEST_GEN_PROGS="$(PERF_EVENTS_NEW_TESTS:%=$(BUILD)/selftests/perf_events/%)"

kheaders: kernel
	@flock $(BUILD)/.kernel.lock $(MAKE) -s -C $(BUILD)/linux O=$(KOBJ) \
		headers_install INSTALL_HDR_PATH=$(KOBJ)/usr >/dev/null

initramfs: tools
	@$(S)/mkinitramfs.sh $(BUILD)/initramfs.cpio

run: all
	@$(S)/run-demo.sh

check: all
	@$(S)/check.sh

# Random sequences over the itrace uAPI in the two-vCPU test guest, as root
# and as nobody, for FUZZ_MINUTES (default 10); FUZZ_SEED replays a run
# (tools/testing/itrace/fuzz/README).  `make check` runs 2 minutes of it.
fuzz: all
	@$(T)/fuzz/run.sh

refresh: linux-src qemu-src
	@$(S)/refresh.sh $(TOP) $(BUILD)/linux linux
	@$(S)/refresh.sh $(T)/qemu $(BUILD)/qemu qemu

refresh-check:
	@$(S)/refresh.sh --check $(TOP) $(BUILD)/linux linux
	@$(S)/refresh.sh --check $(T)/qemu $(BUILD)/qemu qemu

# The bench kernel (DESIGN.md section 7: benchmarks use a non-debug
# kernel): the test config with itrace-bench.config on top (later lines
# win), built from the same patched tree into its own object directory,
# only by `make bench`.  bench-required.txt is checked on the final .config.
BKOBJ    := $(BUILD)/linux-obj-bench
BKFRAG   := $(T)/config/itrace-bench.config
BKREQ    := $(T)/config/bench-required.txt

$(BKOBJ)/.config: $(KFRAG) $(BKFRAG) $(BKREQ) $(S)/kconfig.sh | linux-src
	@echo "  KCONFIG $(BKOBJ)/.config (bench, non-debug)"
	@mkdir -p $(BKOBJ)
	@awk '/^CONFIG_/ { k = $$0; sub(/=.*/, "", k); v[k] = $$0; if (!(k in o)) o[k] = ++n } \
		END { for (k in o) l[o[k]] = k; for (i = 1; i <= n; i++) print v[l[i]] }' \
		$(KFRAG) $(BKFRAG) > $(BKOBJ)/itrace-bench.fragment
	@flock $(BUILD)/.kernel.lock $(S)/kconfig.sh $(BKOBJ) $(BKOBJ)/itrace-bench.fragment $(BKREQ)

bench-kernel: overlay $(BKOBJ)/.config
	@echo "  KERNEL  bzImage (bench, $(BKOBJ))"
	@flock $(BUILD)/.kernel.lock $(MAKE) -s -C $(BUILD)/linux O=$(BKOBJ) \
		CC="ccache gcc" -j$(JOBS) bzImage
	@test -f $(BKOBJ)/arch/x86/boot/bzImage

bench: all bench-kernel
	@BENCH_KERNEL=$(BKOBJ)/arch/x86/boot/bzImage $(S)/bench.sh

series: linux-src
	@$(S)/series.sh --checkpatch

# Every step of the kernel series: checkpatch, the touched C files with
# W=1, the selftests of the step; --full also bzImage (test config and
# allnoconfig + perf) at every step; --boot boots the guest on the
# kernel of each step that adds or changes selftests and runs them (so
# it needs QEMU and the initramfs: all).  make check runs the cheap form.
series-check: all
	@$(S)/series-check.sh --full --boot

# The patch stack as commits in build/series/edit (a full worktree of the
# base), with the overlay's changes the stack lacks as a last "drift"
# commit; after git rebase -i there, series-save writes the stack back
# (tools/testing/itrace/series/README).
series-edit: linux-src
	@$(S)/series.sh --edit

series-save: linux-src
	@$(S)/series.sh --save

clean:
	rm -rf $(BUILD)
