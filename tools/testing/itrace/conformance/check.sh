#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The conformance suite (issue 3 section 3), as one TAP stream:
#   tools/testing/itrace/conformance/check.sh BUILD
# builds the corpus into BUILD/conformance, runs guest.sh in the test VM
# (results in BUILD/check/conformance), and compares on the host with
# verify.sh: each program's decoded instruction addresses against the
# single-step ground truth.  README says what is compared and what is not.
# Environment:
#   CONFORMANCE_PROGS="syscall signal"  only these programs of the corpus
#                       (targeted runs; default: all of corpus.list)
#   PERF_KERNEL_PROGS   the programs also traced user+kernel by perf record
#                       --kcore -e intel_pt//, in one run (default: all the
#                       programs run); its kernel text (kcore) also serves
#                       the libipt decode of the itrace record -k traces
#   CONFORMANCE_KCONV_PROGS  the programs whose itrace record -k trace is
#                       also converted with --kernel and decoded by perf
#                       script (~20 s each); default: fptr compat32 fork
#                       threads (a 64-bit, the 32-bit, a multi-process
#                       and a threaded one); "all" for every program
set -u
BUILD=${1:?usage: check.sh BUILD}
here=$(cd "$(dirname "$0")" && pwd)
corpus=$BUILD/conformance
res=$BUILD/check/conformance
n=0
if ! make -s -C "$here" O="$corpus" > "$BUILD/conformance-build.log" 2>&1; then
	echo "not ok 1 conformance: build the corpus # $(tail -n1 "$BUILD/conformance-build.log")"
	echo "1..1"
	exit 1
fi
in=$(mktemp -d "$BUILD/conformance-in-XXXXXX")
trap 'rm -rf "$in"' EXIT
cp -a "$corpus" "$in/corpus"
if [ -n "${CONFORMANCE_PROGS:-}" ]; then
	awk -v want=" $CONFORMANCE_PROGS " 'index(want, " " $1 " ")' "$corpus/corpus.list" \
		> "$in/corpus/corpus.list"
fi
list=$in/corpus/corpus.list
# the programs also traced user+kernel by perf record -e intel_pt//, all in
# one perf record (guest.sh): by default all the programs run
PERF_KERNEL_PROGS=${PERF_KERNEL_PROGS-$(awk '{ printf "%s%s", s, $1; s = " " }' "$list")}
echo "$corpus" > "$in/corpus-dir"
# Debian's perf with its shared libraries, at their paths (merged /usr, as
# in the guest), for the guest to unpack: the second decoder's recordings.
perf=/usr/bin/perf
extra=()
if [ -x $perf ]; then
	libs=$(ldd $perf | awk '/=> \// { print $3 } /^\t\// { print $1 }' | sed 's,^/lib,/usr/lib,')
	tar -chf "$in/perf.tar" -C / ${perf#/} $(for l in $libs; do echo "${l#/}"; done)
	echo "$PERF_KERNEL_PROGS" > "$in/perf-kernel-progs"
	extra=("$in/perf.tar" "$in/perf-kernel-progs")
fi
# ~4 min on an idle 2-core host; the limit leaves room for a loaded one.
# +ds: the CPU has the Debug Store and BTS too, for the intel_bts runs
# (PT and BTS events never overlap there: one program at a time).
BUILD=$BUILD ITRACE_CPU_OPTS=${ITRACE_CPU_OPTS:-+ds} "$here/../scripts/run-vm.sh" -t 1200 -o "$res" "$here/guest.sh" \
	"$in/corpus" "$in/corpus-dir" "${extra[@]}" > "$BUILD/conformance-vm.log" 2>&1
rc=$?
n=$((n + 1))
case $rc in
0) echo "ok $n conformance: guest run ($(cat "$res/vm-seconds") s)" ;;
*) echo "not ok $n conformance: guest run # run-vm exit $rc; see $res/console.log" ;;
esac
sed 's/^/# /' "$res/cmd.log" 2>/dev/null
ITRACE=$BUILD/tools/itrace/itrace PERF=$perf CORPUS_LIST=$list \
	PERF_KERNEL_PROGS="$PERF_KERNEL_PROGS" \
	KCONV_PROGS=${CONFORMANCE_KCONV_PROGS:-fptr compat32 fork threads} "$here/verify.sh" "$corpus" "$res" |
	awk -v n=$n 'BEGIN { n0 = n } /^(not )?ok [0-9]+/ { n++; sub(/ok [0-9]+/, "ok " n) }
		/^1\.\./ { plan = substr($0, 4); next } { print }
		END { print "1.." (plan != "" && n0 + plan > n ? n0 + plan : n) }'
