#!/bin/bash
# The host-only part of `make check` (layer 1: the tool's unit tests and
# libFuzzer, make install, the kernel series' export, drift, checkpatch
# and per-step builds, run-vm.sh's bad input).  check.sh runs it beside
# the first guest runs, each on one of the two cores, and folds its
# output into the totals; on its own it prints the same result lines:
#   BUILD=... tools/testing/itrace/scripts/check-host.sh
# Results go to $CHECK_RES (default $BUILD/check).  The last line is
# "check-host: end, N s"; exit status 0 only if nothing failed.
set -uo pipefail
: "${BUILD:?}"
here=$(cd "$(dirname "$0")" && pwd)
t=$(cd "$here/.." && pwd)
top=$(cd "$t/../../.." && pwd)
res=${CHECK_RES:-$BUILD/check}
# one job at a time where the series' checks could run several: beside
# make check's guest runs, a second would slow the guest's vCPU
export SERIES_JOBS=${SERIES_JOBS:-1}
mkdir -p "$res"
. "$here/check-lib.sh"

stage "layer 1: host unit tests"
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
stage "layer 1: the kernel series: export, drift, checkpatch, each step compiled"
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

stage "layer 1: run-vm.sh's bad input"
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

echo "check-host: end, host checks took $SECONDS s ($pass passed, $fail failed)"
[ "$fail" -eq 0 ]
