#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# samples.sh OUTDIR: in the guest (busybox sh), recordings of samples with
# trace (itrace record -e EVENT, PERF_SAMPLE_ITRACE) of programs with a
# known call graph; the host checks them with
# tools/testing/itrace/scripts/samples-verify.sh OUTDIR.  For each test
# NAME: OUTDIR/NAME.itrace, the program's output NAME.out, itrace's
# messages NAME.log, its exit status NAME.rc.  Each recording is also
# reported in the guest (NAME.report.json), where the files that ran are.
#
# ITRACE_BUILD: absolute build directory, as on the host.

if [ $# -ne 1 ] || [ -z "${ITRACE_BUILD:-}" ]; then
	echo "usage: ITRACE_BUILD=/abs/build $0 OUTDIR" >&2
	exit 2
fi
out=$1
itrace=$ITRACE_BUILD/tools/itrace/itrace
p=$ITRACE_BUILD/progs
mkdir -p "$out" && cd "$out" || exit 1

# rec NAME ARGS...: itrace record -o NAME.itrace ARGS, then its report
rec() {
	name=$1
	shift
	"$itrace" record -o "$name.itrace" "$@" > "$name.out" 2> "$name.log"
	echo $? > "$name.rc"
	"$itrace" report --samples --json "$name.itrace" > "$name.report.json" 2> "$name.report.log"
	echo $? > "$name.report.rc"
	echo "samples: $name: exit $(cat "$name.rc"), report $(cat "$name.report.rc"): $(tail -n 1 "$name.log")"
}

# tracepoints need tracefs
[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null

# an execute breakpoint on a function of a position independent program
rec bp -e mem:target:x -- "$p/callers"
# the same at an address, in a program at fixed addresses
rec abs -e "mem:$(cat "$p/callers-nopie.target"):x" -- "$p/callers-nopie"
# a data breakpoint (write) on a variable of a position independent program
rec wbp -e mem:sink:w/8 -- "$p/callers"
# page faults at known touches
rec pf -e page-faults -- "$p/callers"
# a tracepoint (the system call's entry: user ip after the syscall)
rec tp -e syscalls:sys_enter_getppid -- "$p/callers"
# timers and counters, inherited into threads and children
rec clock -e cpu-clock -F 2000 -- "$p/threads"
rec task -e task-clock -c 500000 -- "$p/forkexec"
rec insns -e instructions -c 5000 -- "$p/threads"
rec cycles -e cycles -c 2000000 -- "$p/loop"
rec branches -e branches -c 1000 -- "$p/loop"
rec raw -e r00c0 -c 5000 -- "$p/loop"
# one thread only, a small trace per sample
rec noinh --no-inherit --sample-trace 1024 -e page-faults -- "$p/callers"
exit 0
