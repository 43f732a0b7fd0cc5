# SPDX-License-Identifier: GPL-2.0
# Crashing programs for the RLIMIT_ITRACE tests and their expectations
# (<prog>.core-expect; not *.expect, which e2e-verify.sh takes as recordings
# to check).  Built by tools/itrace's Makefile into its output directory, so
# the guest's initramfs carries them:
#   make -f tools/testing/itrace/progs/crash.mk O=build/tools/itrace/crash
O	?= $(CURDIR)
OUT	:= $(abspath $(if $(filter /%,$(O)),$(O),$(or $(PWD),$(CURDIR))/$(O)))
SRC	:= $(abspath $(dir $(lastword $(MAKEFILE_LIST))))

PROGS	:= crashnull crashabort crashstack crashplt crashthread crashfork crashexec
EXPECT	:= crashnull crashabort crashstack crashplt crashthread crashfork crashexec
CC	?= gcc
# as progs/Makefile: the calls of the source are the calls of the binary
CFLAGS	:= -O1 -g -fno-inline -fno-optimize-sibling-calls -fno-ipa-cp \
	   -fno-tree-vectorize -Wall -Wextra
# bound at load time: a call through the PLT goes straight to its target,
# no lazy resolver in the tail of the trace
LDFLAGS	:= -Wl,-z,now
HDRS	:= $(SRC)/crash.h $(SRC)/progs.h $(SRC)/crash.mk

all: $(addprefix $(OUT)/,$(PROGS) libcrashlib.so $(addsuffix .core-expect,$(EXPECT)))

$(OUT)/%: $(SRC)/%.c $(HDRS)
	@mkdir -p $(OUT)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $<

$(OUT)/crashthread: $(SRC)/crashthread.c $(HDRS)
	@mkdir -p $(OUT)
	$(CC) $(CFLAGS) $(LDFLAGS) -pthread -o $@ $<

$(OUT)/libcrashlib.so: $(SRC)/crashlib.c $(SRC)/progs.h $(SRC)/crash.mk
	@mkdir -p $(OUT)
	$(CC) $(CFLAGS) -fPIC -shared $(LDFLAGS) -o $@ $<

$(OUT)/crashplt: $(SRC)/crashplt.c $(HDRS) $(OUT)/libcrashlib.so
	$(CC) $(CFLAGS) $(LDFLAGS) -Wl,-rpath,'$$ORIGIN' -o $@ $< -L$(OUT) -lcrashlib

$(OUT)/%.core-expect: $(SRC)/%.core-expect
	@mkdir -p $(OUT)
	cp $< $@

clean:
	rm -f $(addprefix $(OUT)/,$(PROGS) libcrashlib.so $(addsuffix .core-expect,$(EXPECT)))

.PHONY: all clean
