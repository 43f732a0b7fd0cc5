#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# record.sh OUTDIR: in the guest (busybox sh), the recordings of itrace
# record's own tests (threads, children, attach, CPU-wide, filters,
# snapshots, signals); the host checks them with
# tools/testing/itrace/scripts/record-verify.sh OUTDIR.  For each test
# NAME: OUTDIR/NAME.itrace, the program's output NAME.out, itrace's
# messages NAME.log, itrace's exit status NAME.rc.
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

# rec NAME ARGS...: itrace record -o NAME.itrace ARGS
rec() {
	name=$1
	shift
	"$itrace" record -o "$name.itrace" "$@" > "$name.out" 2> "$name.log"
	echo $? > "$name.rc"
	echo "record: $name: exit $(cat "$name.rc"): $(tail -n 1 "$name.log")"
}

# wait_file FILE: until a program wrote its pid there (20 s at most)
wait_file() {
	n=0
	while [ ! -s "$1" ] && [ $n -lt 200 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	[ -s "$1" ]
}

# Every thread and child, user mode and user+kernel (the kernel text as it
# runs while the events are open, for the host's decode: --kcore once).
# The user+kernel traces are up to ~12 MB, made faster than the reader
# always keeps up with: 16 MiB buffers (-m 4096) per CPU hold them whole,
# so that their decode is checked on a trace without losses (the losses
# themselves are the ITRACE_LOST tests').
for prog in threads pool forkexec; do
	rec "$prog" -- "$p/$prog"
	if [ "$prog" = threads ]; then
		rec "$prog-k" -k -m 4096 --kcore -- "$p/$prog"
	else
		rec "$prog-k" -k -m 4096 -- "$p/$prog"
	fi
done

# Attach to a program already running its loop: all its threads (-p)
"$p/spin" 0 attach.pid > /dev/null &
spin=$!
if wait_file attach.pid; then
	rec attach -p "$spin" --duration 1
else
	echo "spin did not start" > attach.log
fi
kill "$spin"
wait "$spin"

# CPU-wide: every CPU, every process, two programs at once
rec cpuwide -a -- sh -c "$p/threads > cpuwide-threads.out & $p/pool > cpuwide-pool.out & wait"
# ... and kernel mode too: the trace runs through every context switch,
# those between two threads of threads included (no CR3 change, no stop);
# 64 MiB buffers hold the whole of it (~10 MB on one CPU)
rec cpuwide-k -a -k -m 16384 --kcore -- "$p/threads"

# An address filter: fib() only
rec filter --filter "filter fib @ $p/fib" -- "$p/fib"
rec nofilter -- "$p/fib"

# Snapshots: one at SIGUSR2 (the program sends it), one at the end; and
# one more when the program first runs beta() (a hardware breakpoint)
rec snap --snapshot -- "$p/snapme"
rec snapon --snapshot-on beta -- "$p/snapme"
# ... and of every buffer at once: the exit's snapshot of threads and
# migrate (with two vCPUs, two per-CPU buffers; migrate's thread moves
# between them)
rec snapthreads --snapshot -- "$p/threads"
rec snapmigrate --snapshot -- "$p/migrate"

# SIGTERM in the middle: a complete file, the command ended, status 143
"$itrace" record -o term.itrace -- "$p/spin" 0 term.pid > term.out 2> term.log &
ipid=$!
if wait_file term.pid; then
	sleep 1
	kill -TERM "$ipid"
fi
wait "$ipid"
echo $? > term.rc
spid=$(cat term.pid 2>/dev/null)
sleep 0.5
if [ -n "$spid" ] && kill -0 "$spid" 2>/dev/null; then
	echo "alive" > term.orphan
	kill -KILL "$spid"
else
	echo "none" > term.orphan
fi
echo "record: term: exit $(cat term.rc), spin $(cat term.orphan)"
sync
exit 0
