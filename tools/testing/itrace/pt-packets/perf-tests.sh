#!/bin/bash
# Upstream perf's own Intel PT test, tools/perf/tests/shell/test_intel_pt.sh
# as Debian's perf ships it (/usr/lib/perf-core/tests/shell), run in a
# guest with two vCPUs against the emulated CPU (TAP; guest half:
# perf-tests-guest.sh).  Every test it has must print OK, or SKIP for a
# reason that is true of the part the model is:
#  - jitdump: Debian's perf ships no jitdump.h, which the test compiles
#    against;
#  - power events, TNT disable, event trace: CPUID.14H says the part has
#    none of them (qemu/README.md, "CPUID");
# and the script must exit 0.  The test compiles its workloads with
# /usr/bin/cc, which the guest has not: its C source, cut from the script,
# is built here and a stand-in cc in the guest copies it to the -o path.
# lib/waiting.sh gives perf record 5 s to start and processes 5 s to
# exit (in tenths: tm_out=50); the guest runs under TCG, tens of times
# slower than the part, with a debug kernel (KASAN, lockdep), and perf
# record -vvv of a kernel trace took longer than that in one of two runs:
# the copy in the guest waits 50 s instead.  Nothing else of the script
# is changed.
# The script wants bash and GNU coreutils (date +%s%N, mktemp -d), awk,
# grep, sed, taskset, timeout, and python3 for perf script -s: taken
# from the host with their libraries.
#
#   tools/testing/itrace/pt-packets/perf-tests.sh [BUILD]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
export BUILD
out=$BUILD/pt-packets/perf-tests
shell=/usr/lib/perf-core/tests/shell
script=$shell/test_intel_pt.sh
rm -rf "$out"
mkdir -p "$out/root/usr/local/gnu/bin" "$out/root/usr/bin" "$out/root/usr/lib"

if [ ! -f "$script" ] || [ ! -x /usr/bin/perf ]; then
	notok "Debian's perf and $script installed (package linux-perf)"
	echo "1..$n"
	exit 1
fi

copy() {	# copy FILE: into the tar's root at its path, a symlink and its target
	local f=$1 t
	mkdir -p "$out/root$(dirname "$f")"
	cp -a "$f" "$out/root$f"
	if [ -L "$f" ]; then
		t=$(readlink -f "$f")
		mkdir -p "$out/root$(dirname "$t")"
		cp -a "$t" "$out/root$t"
	fi
}
elf() {	# elf FILE: the file and its shared libraries
	local l
	copy "$1"
	for l in $(ldd "$1" 2>/dev/null | grep -o '/[^ ]*'); do
		copy "$l"
	done
}
elf /usr/bin/perf
mkdir -p "$out/root$shell"
cp -a "$script" "$shell/lib" "$out/root$shell/"
sed -i 's/|| tm_out=50$/|| tm_out=500/' "$out/root$shell/lib/waiting.sh"
check "lib/waiting.sh: its 5 s waits made 50 s" \
	[ "$(grep -c '|| tm_out=500$' "$out/root$shell/lib/waiting.sh")" -ge 3 ]
cp -a /usr/lib/perf-core/scripts "$out/root/usr/lib/perf-core/"
tools="bash date mktemp cut sort uniq wc head tail cat rm rmdir sleep ls tr
	grep sed mawk tee env expr seq nproc dirname basename mkdir cp mv uname
	chmod stat timeout id od find taskset"
for b in $tools; do
	p=$(command -v "$b") || { notok "host tool $b found"; continue; }
	elf "$p"
	cp -aL "$p" "$out/root/usr/local/gnu/bin/$b"
done
ln -sf mawk "$out/root/usr/local/gnu/bin/awk"
# perf's embedded python (perf script -s) and its standard library
py=/usr/lib/python3.11
tar -C / -cf - --exclude="${py#/}/test" --exclude="${py#/}/idlelib" \
	--exclude="${py#/}/tkinter" --exclude="${py#/}/ensurepip" \
	--exclude="${py#/}/lib2to3" --exclude="${py#/}/distutils" \
	--exclude="${py#/}/pydoc_data" --exclude="${py#/}/config-3.11-x86_64-linux-gnu" \
	"${py#/}" | tar -C "$out/root" -xf -

# The workload: the C source of the script's first here-document to cc.
sed -n '/^cat << _end_of_file_ | \/usr\/bin\/cc -o "${workload}"/,/^_end_of_file_$/p' \
	"$script" | sed '1d;$d' > "$out/workload.c"
check "workload source cut from test_intel_pt.sh" grep -q 'pthread_create' "$out/workload.c"
gcc -o "$out/root/usr/lib/itrace-fakecc-workload" -xc "$out/workload.c" -pthread
check "workload built" [ -x "$out/root/usr/lib/itrace-fakecc-workload" ]
cat > "$out/root/usr/bin/cc" <<'CC'
#!/bin/sh
# Stand-in for the compiler: the workload test_intel_pt.sh compiles was
# built on the host (pt-packets/perf-tests.sh); copy it to the -o path.
while [ $# -gt 0 ]; do
	[ "$1" = -o ] && exec cp /usr/lib/itrace-fakecc-workload "$2"
	shift
done
exit 1
CC
chmod +x "$out/root/usr/bin/cc"
tar -C "$out/root" -cf "$out/perf.tar" .
rm -rf "$out/root"

"$top/tools/testing/itrace/scripts/run-vm.sh" -t 900 -c 2 -m 3G -o "$out/vm" \
	"$here/perf-tests-guest.sh" "$out/perf.tar" > "$out/run-vm.log" 2>&1
rc=$?
vm=$out/vm
check "guest ran (run-vm exit $rc)" [ $rc -eq 0 ]
log=$vm/test_intel_pt.out
check "kernel health: no WARN/BUG/Oops/KASAN/lockdep report in the console log" \
	"$top/tools/testing/itrace/scripts/kernel-health.sh" "$vm/console.log"

# Each test: its "--- Test NAME ---" line, then OK, SKIP: WHY, or other lines.
awk '
/^--- Test .* ---$/ { if (t != "") print t "\t" (r == "" ? "no result" : r)
	t = $0; sub(/^--- Test /, "", t); sub(/ *---$/, "", t); r = ""; next }
t != "" && r == "" && /^(OK|SKIP: .*)$/ { r = $0 }
END { if (t != "") print t "\t" (r == "" ? "no result" : r) }' "$log" > "$out/results.txt" 2>/dev/null
nt=$(grep -c . "$out/results.txt")
echo "# test_intel_pt.sh: $nt tests"
check "test_intel_pt.sh ran its tests (13 in perf 6.1: $nt)" [ "$nt" -ge 13 ]
while IFS=$'\t' read -r t r; do
	case $r in
	OK) ok "test_intel_pt.sh: $t: OK" ;;
	"SKIP: Include file jitdump.h not found"|"SKIP: power_event_trace is not supported"|\
	"SKIP: tnt_disable is not supported"|"SKIP: event_trace is not supported")
		ok "test_intel_pt.sh: $t: $r (as on the part)" ;;
	*) notok "test_intel_pt.sh: $t: $r"
	   grep -A8 -F -- "--- Test $t ---" "$log" | sed 's/^/#   /' ;;
	esac
done < "$out/results.txt"
for t in "per-thread recording" "recording with sample mode" "virtual LBR" "kernel trace"; do
	check "test_intel_pt.sh: '$t' among the tests run" grep -qF "$t" "$out/results.txt"
done
check "test_intel_pt.sh: exit 0 ($(cat "$vm/test_intel_pt.rc" 2>/dev/null))" \
	grep -qx 0 "$vm/test_intel_pt.rc"
echo "1..$n"
[ "$fail" -eq 0 ]
