#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# record-verify.sh DIR [PREFIX]: check on the host the recordings that
# tools/testing/itrace/guest/record.sh made in the guest (itrace record's
# tests); TAP, one line per check, names prefixed with PREFIX.
#
#  - threads, pool, forkexec (user mode) and their -k twins (user and
#    kernel mode, decoded through the kernel text record --kcore copied):
#    every "count TID FUNCTION N" line the program printed is the decoded
#    "thread TID calls FUNCTION N", and no other thread called FUNCTION;
#    exit 0, no decode error, no gap;
#  - attach (record -p of a running loop): b() called twice per a();
#  - cpuwide (-a with two programs): both programs' per-thread counts;
#    cpuwide-k (-a -k of threads): its per-thread counts, the thread
#    changing where the kernel's trace enters __switch_to;
#  - filter: only fib()'s instructions, as many as without the filter;
#  - timestamps never go backwards on a CPU (threads, cpuwide);
#  - snap: the SIGUSR2 snapshot decodes alone from its first PSB with
#    every alpha() call, the two snapshots together every call;
#    snapon: --snapshot-on beta takes one at beta()'s first call;
#    snapthreads, snapmigrate: the exit's snapshot of every
#    buffer (one per CPU) holds every thread's trace: the per-thread
#    counts exact; migrate's calls and branches as migrate.expect has
#    them, and, when it moved between CPUs, trace from more than one;
#  - term: SIGTERM mid-run: exit 143, a complete decodable file, the
#    command gone.
#
# Environment: ITRACE (default build/tools/itrace/itrace).

set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../../.." && pwd)
ITRACE=${ITRACE:-$top/build/tools/itrace/itrace}

if [ $# -lt 1 ] || [ ! -d "$1" ]; then
	echo "usage: $0 DIR [PREFIX]   (DIR: guest/record.sh's results)" >&2
	exit 2
fi
dir=$1
pfx=${2:+$2/}
n=0
failed=0

tap() {	# tap ok|fail NAME [REASON]
	n=$((n + 1))
	if [ "$1" = ok ]; then
		echo "ok $n ${pfx}record/$2"
	else
		echo "not ok $n ${pfx}record/$2 # ${3:-}"
		failed=$((failed + 1))
	fi
}

stat_of() {	# stat_of STATS KEY...: the value of the line "KEY... N"
	local stats=$1
	shift
	awk -v k="$*" '{ v = $NF; $NF = ""; sub(/ $/, ""); if ($0 == k) { print v; exit } }' \
		<<<"$stats"
}

# decode NAME [ARGS]: --stats of NAME.itrace into $stats, exit status $drc
decode() {
	local name=$1
	shift
	stats=$("$ITRACE" decode --stats "$@" "$dir/$name.itrace" 2> "$dir/$name.decode-err")
	drc=$?
}

# clean NAME: decoded with exit 0, 0 errors, 0 gaps; else the reason in $why
clean() {
	why=
	if [ "$drc" != 0 ]; then
		why="decode exit $drc: $(grep -m1 -v warning "$dir/$1.decode-err")"
	elif [ "$(stat_of "$stats" total errors)" != 0 ] || [ "$(stat_of "$stats" total gaps)" != 0 ]; then
		why="errors $(stat_of "$stats" total errors), gaps $(stat_of "$stats" total gaps)"
	fi
	[ -z "$why" ]
}

# per_thread OUTFILE [PROGRAM]: the program's "count TID FUNCTION N" lines
# against $stats: each one decoded exactly, and no other thread calls
# FUNCTION.  With PROGRAM, FUNCTION is PROGRAM:FUNCTION in $stats (a
# program other than the recording's first, as decode names them).
per_thread() {
	local out=$1 mod=${2:+$2:} tid fn want got nr=0 fns f others
	why=
	while read -r _ tid fn want; do
		nr=$((nr + 1))
		got=$(stat_of "$stats" thread "$tid" calls "$mod$fn")
		if [ "${got:-0}" != "$want" ]; then
			why="thread $tid calls $fn: the program counted $want, decoded ${got:-0}"
			return 1
		fi
	done < <(grep '^count ' "$out")
	[ "$nr" -gt 0 ] || { why="no count lines in $out"; return 1; }
	fns=$(awk '$1 == "count" { print $3 }' "$out" | sort -u)
	for f in $fns; do
		others=$(awk -v f="$mod$f" '$1 == "thread" && $3 == "calls" && $4 == f { print $2 }' \
			<<<"$stats" | sort -u | grep -vxF -f <(awk -v f="$f" \
			'$1 == "count" && $3 == f { print $2 }' "$out"))
		if [ -n "$others" ]; then
			why="calls of $f decoded in threads the program does not count: $others"
			return 1
		fi
	done
	threads_checked=$nr
	return 0
}

kcore=$dir/threads-k.itrace.kcore
for prog in threads pool forkexec; do
	for v in "" -k; do
		name=$prog$v
		if [ "$(cat "$dir/$name.rc" 2>/dev/null)" != 0 ]; then
			tap fail "$name" "itrace record exit $(cat "$dir/$name.rc" 2>/dev/null): $(tail -n1 "$dir/$name.log" 2>/dev/null)"
			continue
		fi
		if [ -n "$v" ]; then
			decode "$name" --kernel "$kcore"
		else
			decode "$name"
		fi
		if ! clean "$name"; then
			tap fail "$name" "$why"
		elif [ -n "$v" ] && [ "$(stat_of "$stats" total kernel_insns)" -eq 0 ]; then
			tap fail "$name" "no kernel instructions decoded in a -k recording"
		elif per_thread "$dir/$name.out"; then
			tap ok "$name: $threads_checked per-thread counts exact, $(stat_of "$stats" total threads) threads, $(stat_of "$stats" total insns) instructions${v:+ ($(stat_of "$stats" total kernel_insns) in the kernel)}, 0 errors"
		else
			tap fail "$name" "$why"
		fi
	done
done

# timestamps: never backwards on one CPU
mono() {	# mono NAME: the flow's times per CPU in order
	"$ITRACE" decode --json "$dir/$1.itrace" 2>/dev/null |
		awk 'match($0, /"cpu": *[0-9]+/) {
			c = substr($0, RSTART, RLENGTH); sub(/.*: */, "", c)
			if (!match($0, /"time": *[0-9]+/)) next
			t = substr($0, RSTART, RLENGTH); sub(/.*: */, "", t); t += 0
			nr++
			if (c in last && t < last[c]) { bad++; if (!first) first = c " " last[c] " > " t }
			last[c] = t
		} END { printf "%d %d %s\n", nr, bad, first }'
}
for name in threads cpuwide; do
	set -- $(mono "$name")
	if [ "${1:-0}" -gt 0 ] && [ "${2:-1}" = 0 ]; then
		tap ok "timestamps $name: $1 timed flow lines, never backwards on a CPU"
	else
		tap fail "timestamps $name" "${1:-0} timed lines, ${2:-?} backwards (cpu ${3:-?}: ${4:-} ${5:-} ${6:-})"
	fi
done

# attach to a running loop: each round calls a() once and b() twice; the
# loop writes trace faster than a reader may keep up with: trace lost
# (gaps, reported) cuts a round at each end
decode attach
a=$(stat_of "$stats" calls a)
b=$(stat_of "$stats" calls b)
gaps=$(stat_of "$stats" total gaps)
slack=$((2 + 2 * ${gaps:-0}))
if [ "$(cat "$dir/attach.rc" 2>/dev/null)" != 0 ]; then
	tap fail "attach" "itrace record -p exit $(cat "$dir/attach.rc" 2>/dev/null): $(tail -n1 "$dir/attach.log")"
elif [ "$drc" != 0 ] && [ "$(stat_of "$stats" total errors)" != 0 ]; then
	tap fail "attach" "decode exit $drc: $(grep -m1 -v warning "$dir/attach.decode-err")"
elif [ "${gaps:-0}" -gt 0 ] && ! grep -q 'trace lost: ' "$dir/attach.log"; then
	tap fail "attach" "$gaps gaps in the decode, no loss reported by record"
elif [ "${a:-0}" -gt 100 ] && [ $((b - 2 * a)) -ge -$slack ] && [ $((b - 2 * a)) -le $slack ]; then
	tap ok "attach: record -p of a running loop: a() $a calls, b() $b (twice per round), ${gaps:-0} gaps reported"
else
	tap fail "attach" "a() ${a:-0} calls, b() ${b:-0}: not twice as many (${gaps:-0} gaps)"
fi

# CPU-wide, two programs
decode cpuwide
if [ "$(cat "$dir/cpuwide.rc" 2>/dev/null)" != 0 ]; then
	tap fail "cpuwide" "itrace record -a exit $(cat "$dir/cpuwide.rc" 2>/dev/null): $(tail -n1 "$dir/cpuwide.log")"
elif ! clean cpuwide; then
	tap fail "cpuwide" "$why"
else
	for p in threads pool; do
		if per_thread "$dir/cpuwide-$p.out" "$p"; then
			tap ok "cpuwide $p: record -a, two programs at once: $threads_checked per-thread counts exact"
		else
			tap fail "cpuwide $p" "$why"
		fi
	done
fi

# CPU-wide, kernel mode too: a switch from one thread of threads to
# another changes no CR3 and stops no trace; the thread changes where the
# kernel's trace enters __switch_to (timeline.c, tl_sync_switch())
decode cpuwide-k --kernel "$dir/cpuwide-k.itrace.kcore"
if [ "$(cat "$dir/cpuwide-k.rc" 2>/dev/null)" != 0 ]; then
	tap fail "cpuwide-k" "itrace record -a -k exit $(cat "$dir/cpuwide-k.rc" 2>/dev/null): $(tail -n1 "$dir/cpuwide-k.log")"
elif ! clean cpuwide-k; then
	tap fail "cpuwide-k" "$why"
elif per_thread "$dir/cpuwide-k.out" threads; then
	tap ok "cpuwide-k threads: record -a -k, user and kernel mode: $threads_checked per-thread counts exact (each thread from its __switch_to on)"
else
	tap fail "cpuwide-k threads" "$why"
fi

# an address filter: only fib(), as much of it as without the filter
decode nofilter
want=$(stat_of "$stats" insns fib)
decode filter
total=$(stat_of "$stats" total insns)
got=$(stat_of "$stats" insns fib)
if ! clean filter; then
	tap fail "filter" "$why"
elif [ -n "$want" ] && [ "$got" = "$want" ] && [ "$total" = "$got" ]; then
	tap ok "filter: --filter 'filter fib @ fib': $total instructions, all of fib(), as many as unfiltered"
else
	tap fail "filter" "fib(): ${got:-0} of ${total:-0} decoded instructions, ${want:-?} without the filter"
fi

# snapshots
decode snap --snapshot 1
s1a=$(stat_of "$stats" calls alpha)
s1b=$(stat_of "$stats" calls beta)
if ! grep -q ', 2 snapshots' "$dir/snap.log" 2>/dev/null; then
	tap fail "snapshot" "$(tail -n1 "$dir/snap.log" 2>/dev/null)"
elif ! clean snap; then
	tap fail "snapshot 1" "$why"
elif [ "$s1a" = 3000 ] && [ "${s1b:-0}" -lt 3000 ]; then
	tap ok "snapshot 1 (SIGUSR2) alone, from its first PSB: every alpha() call (3000), ${s1b:-0} of beta()"
else
	tap fail "snapshot 1" "alpha ${s1a:-0} (3000 expected), beta ${s1b:-0}"
fi
decode snap
if clean snap && [ "$(stat_of "$stats" calls alpha)" = 3000 ] &&
   [ "$(stat_of "$stats" calls beta)" = 3000 ]; then
	tap ok "snapshots 1 and 2: every call of alpha() and beta(), 0 errors"
else
	tap fail "snapshots 1 and 2" "${why:-alpha $(stat_of "$stats" calls alpha), beta $(stat_of "$stats" calls beta)}"
fi

# --snapshot-on beta: snapshot 2 is taken at the first call of beta()
decode snapon --snapshot 2
if ! grep -q ', 3 snapshots' "$dir/snapon.log" 2>/dev/null ||
   ! grep -q 'beta reached' "$dir/snapon.log"; then
	tap fail "snapshot-on" "$(tr '\n' ' ' < "$dir/snapon.log" 2>/dev/null)"
elif ! clean snapon; then
	tap fail "snapshot-on" "$why"
elif [ "$(stat_of "$stats" calls beta)" -ge 1 ] && [ "$(stat_of "$stats" calls alpha)" = "" ]; then
	tap ok "snapshot-on beta: its snapshot alone decodes: $(stat_of "$stats" calls beta) calls of beta(), none of alpha()"
else
	tap fail "snapshot-on" "beta $(stat_of "$stats" calls beta), alpha $(stat_of "$stats" calls alpha)"
fi

# the exit's snapshot of every buffer: each thread's whole trace
snapped() {	# snapped NAME: recorded, 1 snapshot, a buffer per CPU, clean
	local ncpu
	ncpu=$(sed -n 's/.* on \([0-9]*\) CPUs* (.*/\1/p' "$dir/$1.log" 2>/dev/null)
	nbuf=$(sed -n 's/.* from \([0-9]*\) buffers* (one per CPU).*/\1/p' "$dir/$1.log" 2>/dev/null)
	decode "$1"
	why=
	if [ "$(cat "$dir/$1.rc" 2>/dev/null)" != 0 ] ||
	   ! grep -q ', 1 snapshot$' "$dir/$1.log" 2>/dev/null; then
		why="exit $(cat "$dir/$1.rc" 2>/dev/null): $(tail -n1 "$dir/$1.log" 2>/dev/null)"
	elif [ -z "$ncpu" ] || [ "$nbuf" != "$ncpu" ]; then
		why="${nbuf:-?} buffers for ${ncpu:-?} CPUs: $(tr '\n' ' ' < "$dir/$1.log")"
	else
		clean "$1"
	fi
	[ -z "$why" ]
}
if ! snapped snapthreads || ! per_thread "$dir/snapthreads.out"; then
	tap fail "snapthreads" "$why"
else
	tap ok "snapthreads: --snapshot of threads, the exit's snapshot of $nbuf buffer(s): $threads_checked per-thread counts exact, 0 errors"
fi
moves=$(sed -n 's/^cpus [0-9]* moves \([0-9]*\) .*/\1/p' "$dir/snapmigrate.out" 2>/dev/null)
if ! snapped snapmigrate; then
	tap fail "snapmigrate" "$why"
elif [ "$(stat_of "$stats" calls hop)" != 16 ] || [ "$(stat_of "$stats" calls spin)" != 16 ] ||
     [ "$(stat_of "$stats" taken spin)" != 15984 ]; then
	tap fail "snapmigrate" "hop $(stat_of "$stats" calls hop) calls, spin $(stat_of "$stats" calls spin), taken $(stat_of "$stats" taken spin) (16, 16, 15984 expected)"
else
	cpus=$("$ITRACE" decode --json "$dir/snapmigrate.itrace" 2>/dev/null |
		grep -o '"cpu": *[0-9]*' | sort -u | wc -l)
	if [ "${moves:-0}" -gt 0 ] && [ "$cpus" -lt 2 ]; then
		tap fail "snapmigrate" "moved $moves times, but the flow has trace of $cpus CPU"
	else
		tap ok "snapmigrate: --snapshot of a thread moving between CPUs (${moves:-0} moves), the exit's snapshot of $nbuf buffer(s): every call and branch, trace of $cpus CPU(s), 0 errors"
	fi
fi

# SIGTERM in the middle.  The trace of a second of spin may outrun the
# reader (buffer full): a gap is then fine if record reported the loss.
decode term
if ! clean term && [ "$drc" = 0 ] && [ "$(stat_of "$stats" total errors)" = 0 ] &&
   grep -q 'trace lost: ' "$dir/term.log" 2>/dev/null; then
	echo "# sigterm: $why, the loss reported by record: $(grep -m1 'trace lost: ' "$dir/term.log")"
	why=
fi
if [ "$(cat "$dir/term.rc" 2>/dev/null)" != 143 ]; then
	tap fail "sigterm" "itrace record exit $(cat "$dir/term.rc" 2>/dev/null), not 143 (SIGTERM): $(tail -n1 "$dir/term.log")"
elif [ "$(cat "$dir/term.orphan" 2>/dev/null)" != none ]; then
	tap fail "sigterm" "the command still ran after itrace record ended"
elif [ -n "$why" ] || grep -q truncated "$dir/term.decode-err"; then
	tap fail "sigterm" "${why:-the file is truncated}"
elif [ "$(stat_of "$stats" calls a)" -gt 0 ]; then
	tap ok "sigterm: exit 143, the command ended, a complete file: $(stat_of "$stats" calls a) rounds decoded"
else
	tap fail "sigterm" "no call of a() decoded"
fi

# decode --jobs on these recordings: the run of each buffer cut at every
# PSB at least 4 KiB from the last (ITRACE_DECODE_TASK, pdec.c), decoded
# ahead by one thread and by two: --stats as with --jobs 1 (exit status
# too), and tasks joined, and the time kept between blocks libipt's.  Per-CPU buffers (smp), execs (forkexec), the user-mode
# part of a -k recording (forkexec-k without its kernel), the kernel with
# it (threads-k --kernel), CPU-wide ones with context switches (cpuwide,
# and cpuwide-k, whose thread changes where the kernel enters
# __switch_to).  Each of these decodes with no error (checked above): for
# a trace of other code than ran, the two may differ (itrace-decode(1)).
jobs_same() {	# jobs_same NAME [ARGS]
	local name=$1 one more rc1 rcj st j why=
	shift
	[ -f "$dir/$name.itrace" ] || { tap fail "jobs/$name" "no $name.itrace"; return; }
	one=$("$ITRACE" decode --stats --jobs 1 "$@" "$dir/$name.itrace" 2>/dev/null)
	rc1=$?
	# one worker (and the caller's thread, which decodes tasks while it
	# waits), then two; with one, the workers also check that the time
	# they keep from block to block is libipt's (ITRACE_DECODE_CHECK_TIME)
	for j in 2 3; do
		more=$(ITRACE_DECODE_TASK=4096 ITRACE_DECODE_MIN=0 ITRACE_DECODE_STATS=1 \
			ITRACE_DECODE_CHECK_TIME=$((j == 2)) "$ITRACE" decode --stats --jobs $j "$@" "$dir/$name.itrace" 2> "$dir/$name.jobs-err")
		rcj=$?
		st=$(grep -m1 'parallel decode' "$dir/$name.jobs-err" | sed 's/^itrace: parallel decode: //')
		if [ "$rc1" != "$rcj" ]; then
			why="decode --stats exit $rc1, with --jobs $j exit $rcj $(grep -m1 itrace: "$dir/$name.jobs-err")"
		elif [ "$one" != "$more" ]; then
			why="decode --stats differs with --jobs $j: $(diff <(echo "$one") <(echo "$more") | grep -m1 '^[<>]')"
		elif ! grep -q '[1-9][0-9]* joined' <<<"$st"; then
			why="--jobs $j: no task joined (${st:-no pool})"
		fi
		[ -z "$why" ] || break
	done
	if [ -n "$why" ]; then
		tap fail "jobs/$name" "$why"
	else
		tap ok "jobs/$name: decode --stats --jobs 2 and 3 as --jobs 1 ($st; $(stat_of "$one" total insns) instructions)"
	fi
}
jobs_same threads
jobs_same pool
jobs_same forkexec
jobs_same forkexec-k
jobs_same threads-k --kernel "$dir/threads-k.itrace.kcore"
jobs_same attach
jobs_same cpuwide
jobs_same cpuwide-k --kernel "$dir/cpuwide-k.itrace.kcore"
jobs_same snapthreads

echo "1..$n"
exit $((failed ? 1 : 0))
