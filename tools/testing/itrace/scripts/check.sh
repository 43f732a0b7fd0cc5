#!/bin/bash
# `make check`: every test layer (DESIGN.md section 7), one summary line
# "N passed, N failed" at the end.  Exit status 0 only if nothing failed.
set -uo pipefail
: "${BUILD:?}"
here=$(cd "$(dirname "$0")" && pwd)
t=$(cd "$here/.." && pwd)
top=$(cd "$t/../../.." && pwd)
res=$BUILD/check
rm -rf "$res"
mkdir -p "$res"
pass=0 fail=0 skip=0

result() {	# result ok|fail|skip NAME [REASON]
	case $1 in
	ok)   pass=$((pass + 1)); echo "ok      $2" ;;
	skip) skip=$((skip + 1)); echo "skip    $2${3:+ # $3}" ;;
	*)    fail=$((fail + 1)); echo "FAIL    $2${3:+ # $3}" ;;
	esac
}

# tap FILE PREFIX: fold a TAP/KTAP stream's top-level results into the
# totals; a plan with missing results counts each missing one as failed.
tap() {
	local file=$1 prefix=$2 line name plan=0 seen=0
	while IFS= read -r line; do
		case $line in
		1..*) plan=$((plan + ${line#1..})) ;;
		"ok "[0-9]*|"not ok "[0-9]*)
			seen=$((seen + 1))
			name=$(echo "$line" | sed -E 's/^(not )?ok [0-9]+ *-? *//')
			[ -n "$prefix" ] && name="$prefix/$name"
			if echo "$line" | grep -qiE '# *skip'; then
				result skip "${name%%#*}" "${name#*#}"
			elif [ "${line#not}" != "$line" ]; then
				result fail "$name"
			else
				result ok "$name"
			fi ;;
		esac
	done < "$file"
	if [ "$plan" -gt "$seen" ]; then
		for _ in $(seq $((plan - seen))); do
			result fail "$prefix(missing result: test crashed or hung; see $file)"
		done
	fi
	if [ "$plan" -eq 0 ] && [ "$seen" -eq 0 ]; then
		result fail "$file (no TAP output; see $file)"
	fi
}

echo "== layer 1: host unit tests"
"$here/test-overlay.sh" > "$res/host-overlay.tap" 2>&1
tap "$res/host-overlay.tap" host/overlay
make -s -C "$top/tools/itrace" O="$BUILD/tools/itrace" TEST_O="$BUILD/itrace-test" test > "$res/host-itrace.tap" 2>&1
tap "$res/host-itrace.tap" host/itrace
# the parsers under libFuzzer with ASan/UBSan/LSan, bounded: 20 s a target
if make -s -C "$top/tools/itrace" O="$BUILD/tools/itrace" TEST_O="$BUILD/itrace-test" \
	FUZZ_SECONDS=20 fuzz > "$res/fuzz.log" 2>&1; then
	result ok "host/fuzz: $(grep '^fuzz-' "$res/fuzz.log" | tr '\n' ';' | sed 's/;$//'): no crash, no sanitizer report, no leak"
else
	result fail "host/fuzz" "$(grep -v '^make' "$res/fuzz.log" | tail -3 | tr '\n' ' ') (logs: $BUILD/itrace-test/fuzz-*.log)"
fi
# make install (the top level's): the binary, a man page per command
# (rendered without a warning), the JSON schema
inst=$res/install
rm -rf "$inst"
if make -s -C "$top" DESTDIR="$inst" PREFIX=/usr install \
	> "$res/install.log" 2>&1 &&
   [ -x "$inst/usr/bin/itrace" ] && [ -f "$inst/usr/share/itrace/itrace.schema.json" ]; then
	bad=
	for p in itrace itrace-record itrace-decode itrace-report itrace-core itrace-convert; do
		f=$inst/usr/share/man/man1/$p.1
		w=$(MANWIDTH=80 man --warnings -l "$f" 2>&1 >/dev/null)
		{ [ -f "$f" ] && [ -z "$w" ] && MANWIDTH=80 man -l "$f" 2>/dev/null | grep -q '^EXIT STATUS'; } ||
			bad="$bad $p${w:+ ($w)}"
	done
	if [ -z "$bad" ]; then
		result ok "host/itrace: make install (top level): itrace, 6 man pages (EXIT STATUS, no groff warning), the JSON schema"
	else
		result fail "host/itrace: make install: man pages:$bad"
	fi
else
	result fail "host/itrace: make install" "$(tail -2 "$res/install.log" | tr '\n' ' ')"
fi
rm -rf "$inst"
if "$here/series.sh" --checkpatch > "$res/series.tap" 2>&1; then
	result ok "host/series: make series exports every overlay file"
else
	grep -q '^series:' "$res/series.tap" &&
		result fail "host/series" "$(grep '^series:' "$res/series.tap" | head -2 | tr '\n' ' ')"
fi
tap "$res/series.tap" host/series
# The exported kernel patches, applied with git am to the pristine base,
# give the overlay's kernel files byte for byte; a stack that lacks a
# patch, or has one line changed, is drift: exit 1 and the file named.
st=$res/series-stack
fresh_stack() {	# $st: a copy of the exported kernel patches
	rm -rf "$st" && mkdir -p "$st"
	cp "$BUILD"/series/kernel/[0-9]*.patch "$st/" 2>/dev/null
	rm -f "$st/0000-cover-letter.patch"
}
series_case() {	# series_case NAME WANT_RC -F|-E PATTERN: series.sh --check on $st
	local out rc
	out=$(SERIES_STACK=$st "$here/series.sh" --check 2>&1) && rc=0 || rc=$?
	if [ "$rc" = "$2" ] && echo "$out" | grep -q "$3" -- "$4"; then
		result ok "host/series: $1: exit $rc, $(echo "$out" | grep -m1 "$3" -- "$4")"
	else
		result fail "host/series: $1" "exit $rc: $(echo "$out" | head -3 | tr '\n' ' ')"
	fi
}
fresh_stack
series_case "git am of the exported kernel patches ($(ls "$st" | wc -l))" 0 -F "byte for byte"
last=$(ls "$st"/*.patch 2>/dev/null | tail -1)
# the drift report names a file of the missing patch
files=$(sed -n 's,^diff --git a/\([^ ]*\) .*,\1,p' "$last" 2>/dev/null | tr '\n' '|')
rm -f "$last"
series_case "the stack without its last patch" 1 -E "^series: drift: .*(${files%|})"
fresh_stack
# one added line of the last patch, changed (still applies): drift in its file
n=$(grep -n '^+[^+]' "$last" 2>/dev/null | tail -1 | cut -d: -f1)
file=$(head -n "${n:-1}" "$last" | sed -n 's,^diff --git a/\([^ ]*\) .*,\1,p' | tail -1)
[ -n "$n" ] && sed -i "${n}s/\$/ /" "$last"
series_case "a stack with one line changed" 1 -F "$file differs between the stack and the overlay"
rm -rf "$st"
# Every step of the kernel series: its C files compiled with W=1, the
# selftests of the step built (make series-check, cheap form).  The drift
# and checkpatch of the same patches were checked just above.
SERIES_CHECK_NO_DRIFT=1 "$here/series-check.sh" --no-checkpatch > "$res/series-check.tap" 2>&1
tap "$res/series-check.tap" host/series-check
# The MAINTAINERS rule of series-check, on the series' MAINTAINERS patch
# alone at the base: its paths do not exist yet; without its M: line.
maint_case() {	# maint_case NAME PATTERN: series-check on $st, exit 1 and PATTERN
	local out rc
	out=$(SERIES_STACK=$st SERIES_CHECK_NO_DRIFT=1 "$here/series-check.sh" --no-checkpatch 2>&1) &&
		rc=0 || rc=$?
	if [ "$rc" = 1 ] && echo "$out" | grep -q "^not ok .*$2"; then
		result ok "host/series-check: $1: $(echo "$out" | grep -m1 "^not ok .*$2" | sed 's/^not ok [0-9]* - //')"
	else
		result fail "host/series-check: $1" "exit $rc: $(echo "$out" | grep -m1 '^not ok\|MAINTAINERS')"
	fi
}
rm -rf "$st" && mkdir -p "$st"
maint=$(grep -l '^+++ b/MAINTAINERS' "$BUILD"/series/kernel/[0-9]*.patch | tail -1)
cp "$maint" "$st/"
maint_case "the MAINTAINERS patch before the files it names" "F: patterns that match no file: Documentation/userspace-api/itrace.rst"
# its M: lines dropped, its (one) hunk as many lines shorter
perl -0pi -e 'my $k = () = /^\+M:.*\n/mg; s/^\+M:.*\n//mg;
	s/^(@@ -\d+,\d+ \+\d+,)(\d+)( @@)/$1 . ($2 - $k) . $3/me' "$st"/*.patch
maint_case "the MAINTAINERS entry without its M: line" "has no M: line"
rm -rf "$st"

# run-vm.sh's bad input: a clear message and a non-zero exit, no guest
rv() {	# rv NAME WANT_RC WANT_TEXT ARGS...: one run-vm.sh call
	local name=$1 want=$2 text=$3 out rc
	shift 3
	out=$("$here/run-vm.sh" -t 60 -o "$res/run-vm-bad" "$@" 2>&1) && rc=0 || rc=$?
	if [ "$rc" = "$want" ] && echo "$out" | grep -q "$text"; then
		result ok "host/run-vm: $name: exit $rc, \"$text\""
	else
		result fail "host/run-vm: $name" "exit $rc: $(echo "$out" | head -2 | tr '\n' ' ')"
	fi
}
echo 'echo never > "$OUT/never"' > "$res/run-vm-bad.sh"
rv "-c 0" 2 "wants 1 to 4 CPUs" -c 0 "$res/run-vm-bad.sh"
rv "-c x" 2 "wants 1 to 4 CPUs" -c x "$res/run-vm-bad.sh"
rv "no script" 2 "usage:"
rv "missing script" 2 "no such file" "$res/no-such-script.sh"
ITRACE_CPU_OPTS=no-such-property=on rv "QEMU does not start" 1 "guest returned no results" \
	"$res/run-vm-bad.sh"

echo "== emulated Intel PT against the upstream driver, libipt and perf"
"$t/pt-packets/check.sh" "$BUILD" > "$res/pt-packets.tap" 2>&1
tap "$res/pt-packets.tap" pt

echo "== layer 2-3: guest (kselftests, end-to-end recordings)"
g=$res/guest
# vm_result NAME RC DIR: the guest run's exit status and its kernel log
vm_result() {
	case $2 in
	0)   result ok "$1/run" ;;
	124) result fail "$1/run" "timed out" ;;
	125) result fail "$1/run" "guest ran, but the kernel log has a report" ;;
	*)   result fail "$1/run" "exit $2; see $3/cmd.log, $3/console.log" ;;
	esac
	if "$here/kernel-health.sh" "$3/console.log" 2>"$3.health.txt"; then
		result ok "$1/kernel-health (no WARN/BUG/KASAN/lockdep/kmemleak)"
	else
		result fail "$1/kernel-health" "$(head -3 "$3.health.txt" | tr '\n' ' ')"
	fi
}
"$here/run-vm.sh" -t 1200 -o "$g" "$t/guest/check.sh"
vm_result guest $? "$g"
boot=$(sed -n 's/.*itrace-guest: booted in \([0-9.]*\) s.*/\1/p' "$g/console.log" 2>/dev/null)
echo "   guest boot ${boot:-?} s (kernel uptime at init), whole VM run $(cat "$g/vm-seconds" 2>/dev/null || echo ?) s"

if grep -q '^type [0-9]' "$g/pt-sysfs.txt" 2>/dev/null &&
   grep -q '^cap topa_output 1' "$g/pt-sysfs.txt"; then
	result ok "guest/intel_pt-pmu-registered"
else
	result fail "guest/intel_pt-pmu-registered" "$(head -2 "$g/pt-sysfs.txt" 2>/dev/null | tr '\n' ' ')"
fi

n=0
for f in "$g"/kselftest/*.tap; do
	[ -f "$f" ] || continue
	n=$((n + 1))
	tap "$f" "kselftest/$(basename "$f" .tap)"
done
[ "$n" -gt 0 ] || result fail "kselftest" "no kselftest output came back from the guest"

echo "== first-generation ToPA: one output entry per table (-cpu ...,intel-pt-topa-multi=off)"
gs=$res/topa-single
ITRACE_CPU_OPTS=intel-pt-topa-multi=off \
	"$here/run-vm.sh" -t 900 -o "$gs" "$t/guest/topa-single.sh"
vm_result topa-single $? "$gs"
if grep -q '^cap topa_multiple_entries 0' "$gs/pt-sysfs.txt" 2>/dev/null &&
   grep -q '^cap topa_output 1' "$gs/pt-sysfs.txt"; then
	result ok "topa-single/caps: topa_output 1, topa_multiple_entries 0"
else
	result fail "topa-single/caps" "$(tr '\n' ' ' < "$gs/pt-sysfs.txt" 2>/dev/null)"
fi
for f in "$gs"/kselftest/*.tap; do
	[ -f "$f" ] && tap "$f" "topa-single/kselftest/$(basename "$f" .tap)"
done
"$here/e2e-verify.sh" "$gs/e2e" > "$res/e2e-single.tap" 2>&1
tap "$res/e2e-single.tap" topa-single

echo "== late ToPA PMIs (-cpu ...,intel-pt-pmi-delay=65536): overwrite mode stops, never laps, goes on"
gd=$res/pmi-delay
mkdir -p "$gd"
echo 65536 > "$res/pmi-delay.bytes"
ITRACE_CPU_OPTS=intel-pt-pmi-delay=65536 \
	"$here/run-vm.sh" -t 600 -o "$gd" "$t/guest/pmi-delay.sh" "$res/pmi-delay.bytes"
vm_result pmi-delay $? "$gd"
for f in "$gd"/kselftest/*.tap; do
	[ -f "$f" ] && tap "$f" "pmi-delay/kselftest/$(basename "$f" .tap)"
done
[ -f "$gd/kselftest/overwrite.tap" ] ||
	result fail "pmi-delay/kselftest" "no kselftest output came back from the guest"

echo "== two vCPUs (run-vm.sh -c 2): kselftests and end-to-end recordings"
gm=$res/smp
"$here/run-vm.sh" -t 900 -c 2 -o "$gm" "$t/guest/smp.sh"
vm_result smp $? "$gm"
if grep -qx 'nproc 2' "$gm/cpus.txt" 2>/dev/null; then
	result ok "smp/cpus: 2 online"
else
	result fail "smp/cpus" "$(tr '\n' ' ' < "$gm/cpus.txt" 2>/dev/null)"
fi
if grep -q '^cpus 2 moves 15 ' "$gm/e2e/migrate.out" 2>/dev/null; then
	result ok "smp/migrate: the traced thread moved 15 times between the CPUs"
else
	result fail "smp/migrate" "$(head -1 "$gm/e2e/migrate.out" 2>/dev/null)"
fi
for f in "$gm"/kselftest/*.tap; do
	[ -f "$f" ] && tap "$f" "smp/kselftest/$(basename "$f" .tap)"
done
"$here/e2e-verify.sh" "$gm/e2e" > "$res/e2e-smp.tap" 2>&1
tap "$res/e2e-smp.tap" smp
"$here/record-verify.sh" "$gm/record" smp > "$res/record-smp.tap" 2>&1
tap "$res/record-smp.tap" ""

echo "== fuzz: random itrace uAPI sequences, root and nobody, two vCPUs (make fuzz, ${CHECK_FUZZ_SECONDS:=120} s)"
gf=$res/fuzz
FUZZ_SECONDS=$CHECK_FUZZ_SECONDS "$t/fuzz/run.sh" "$gf" > "$res/fuzz.txt" 2>&1
sum=$(sed -n 's/^itrace-fuzz: \(seed .*: [0-9]* ops .*\)$/\1/p' "$gf/fuzz/run.log" 2>/dev/null)
if [ -n "$sum" ]; then
	result ok "fuzz/run: $sum"
else
	result fail "fuzz/run" "no summary; see $res/fuzz.txt, $gf/console.log"
fi
if "$here/kernel-health.sh" "$gf/console.log" 2>"$gf.health.txt"; then
	result ok "fuzz/kernel-health (no WARN/BUG/KASAN/lockdep/kmemleak)"
else
	result fail "fuzz/kernel-health" "$(head -3 "$gf.health.txt" | tr '\n' ' ')"
fi
if [ -n "$sum" ] && ! grep -q '^itrace-fuzz: FINDING' "$gf/fuzz/run.log"; then
	result ok "fuzz/findings: none (the uAPI document's errnos, fields, signals, notes)"
else
	result fail "fuzz/findings" "$(grep -m2 '^itrace-fuzz: FINDING' "$gf/fuzz/run.log" 2>/dev/null | tr '\n' ' ')see $res/fuzz.txt"
fi

echo "== layer 3: end-to-end decode on the host"
"$here/e2e-verify.sh" "$g/e2e" > "$res/e2e.tap" 2>&1
tap "$res/e2e.tap" ""
echo "== itrace record: threads and children, attach, CPU-wide, filter, snapshots, signals"
"$here/record-verify.sh" "$g/record" > "$res/record.tap" 2>&1
tap "$res/record.tap" ""

echo "== itrace record -e / report: samples with trace against the program's call graph"
"$here/samples-verify.sh" "$g/samples" > "$res/samples.tap" 2>&1
tap "$res/samples.tap" ""

echo "== RLIMIT_ITRACE core dumps: itrace core in the guest; readelf, gdb, itrace on the host"
tap "$g/coredump/coredump.tap" ""
"$t/guest/coredump.sh" --host "$g/coredump" > "$res/coredump-host.tap" 2>&1
tap "$res/coredump-host.tap" ""

echo "== conformance: decoded traces against single-stepped ground truth (conformance/README)"
"$t/conformance/check.sh" "$BUILD" > "$res/conformance.tap" 2>&1
tap "$res/conformance.tap" conf

echo
if [ "$skip" -gt 0 ]; then
	echo "$pass passed, $fail failed, $skip skipped"
else
	echo "$pass passed, $fail failed"
fi
[ "$fail" -eq 0 ]
