#!/bin/bash
# The emulated Branch Trace Store under Linux's stock intel_bts driver and
# Debian's perf (TAP; guest half: bts-guest.sh), CPU model with "+ds":
#  - the driver registers (DS, DTES64, BTS in /proc/cpuinfo);
#  - perf record -e intel_bts//u --per-thread of bts-prog.c, a program of
#    known branches, and perf script --itrace=b: its user-mode branches,
#    from and to each, exactly, in program order; the SYSCALLs with a
#    kernel target; no decoding error;
#  - the same with kernel branches; the kernel's log stays clean;
#  - the kselftest of intel_bts's trace fds (selftests/itrace/bts.c), and
#    rlimit_itrace's bts_event_beside_core_trace (a user's BTS event is
#    never refused because of the kernel-owned PT event of a core dump),
#    its tests of intel_bts core notes and of a user's PT event beside them;
#  - itrace core of the intel_bts cores of crashnull, crashabort, crashplt:
#    the known paths of their .core-expect files, as with intel_pt;
#  - itrace record --pmu intel_bts -e page-faults / mem:target:x of
#    progs/callers: every fault and every call sampled, each sample's BTS
#    records decoded by itrace report up to the sample's ip.
#
#   tools/testing/itrace/pt-packets/bts.sh [BUILD]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
export BUILD
out=$BUILD/pt-packets/bts
mkdir -p "$out"

gcc -O2 -static -nostdlib -no-pie -fno-pie -o "$out/bts-prog" "$here/bts-prog.c"
perf=/usr/bin/perf
libs=$(ldd $perf | awk '/=> \// { print $3 } /^\t\// { print $1 }' | sed 's,^/lib,/usr/lib,')
tar -chf "$out/perf.tar" -C / ${perf#/} $(for l in $libs; do echo "${l#/}"; done)
ITRACE_CPU_OPTS=+ds "$top/tools/testing/itrace/scripts/run-vm.sh" -t 900 -o "$out/vm" \
	"$here/bts-guest.sh" "$out/perf.tar" "$out/bts-prog" > "$out/run-vm.log" 2>&1
rc=$?
vm=$out/vm
check "guest ran (run-vm exit $rc)" [ $rc -eq 0 ]
d=$vm/dmesg-end.txt
check "CPU flags dts, dtes64, ds_cpl, bts ($(echo $(cat "$vm/cpuflags.txt" 2>/dev/null)))" \
	bash -c "[ \$(grep -c . '$vm/cpuflags.txt') = 4 ]"
check "intel_bts PMU registered" grep -qx intel_bts "$vm/pmus.txt"
check "kernel health: no WARN/BUG/Oops/KASAN/lockdep report in the console log" \
	"$top/tools/testing/itrace/scripts/kernel-health.sh" "$vm/console.log"
for bad in 'unchecked MSR access' 'irq loop stuck' 'NMI received for unknown reason' \
	'Dazed and confused' 'perf: interrupt took too long'; do
	check "dmesg: no '$bad'" bash -c "! grep -q '$bad' '$d'"
done

# The expected user-mode branches, "from to" in hex, from the ELF.
dis=$(objdump -d --no-show-raw-insn "$out/bts-prog")
addr() {	# addr REGEX [N]: address of the N-th instruction matching REGEX
	echo "$dis" | awk -F'\t' -v re="$1" -v n="${2:-1}" '
		/^ *[0-9a-f]+:\t/ { a = $1; sub(/^ */, "", a); sub(/:$/, "", a)
			if ($2 ~ re && ++k == n) { print a; exit } }'
}
next_of() {	# next_of ADDR: the address of the instruction after ADDR
	echo "$dis" | awk -F'\t' -v want="$1" '
		/^ *[0-9a-f]+:\t/ { a = $1; sub(/^ */, "", a); sub(/:$/, "", a)
			if (hit) { print a; exit } if (a == want) hit = 1 }'
}
sym() { nm "$out/bts-prog" | awk -v s="$1" '$3 == s { sub(/^0*/, "", $1); print $1 }'; }
call_f=$(addr '^call ') jmp=$(addr '^jmp ') jnz=$(addr '^jne ')
icall=$(addr '^call +\*') ret_g=$(addr '^ret' 2) ret_f=$(addr '^ret' 1)
sc1=$(addr '^syscall' 1) sc2=$(addr '^syscall' 2)
loop=$(sym loop) f=$(sym f) g=$(sym g)
{
	echo "$call_f $f"
	echo "$jmp $(next_of "$(next_of "$jmp")")"
	for i in 1 2 3 4; do echo "$jnz $loop"; done
	echo "$icall $g"
	echo "$ret_g $(next_of "$icall")"
	echo "$ret_f $(next_of "$call_f")"
} > "$out/want.txt"
lo=$((0x$(sym _start))) hi=$((0x$g + 1))
user() { local v=$((0x$1)); [ $v -ge $lo ] && [ $v -le $hi ]; }
# The records as the driver stored them (perf script -D: "FROM -> TO").
sed -nE 's/.* ([0-9a-f]+) -> ([0-9a-f]+) (miss|pred)?.*$/\1 \2/p' "$vm/dump.txt" 2>/dev/null \
	> "$out/raw.txt"
# perf script --itrace=b lines: "FROM => TO" (hex, maybe padded).
awk '{ for (i = 1; i <= NF; i++) if ($i == "=>") { f = $(i - 1); t = $(i + 1) }
	sub(/^0*/, "", f); sub(/^0*/, "", t); print f, t }' "$vm/branches.txt" 2>/dev/null \
	> "$out/script.txt"
# Branches within the program (user to user), in order.
flow() { while read -r a b; do user "$a" && user "$b" && echo "$a $b"; done < "$1"; }
flow "$out/raw.txt" > "$out/got-raw.txt"
flow "$out/script.txt" > "$out/got-script.txt"
echo "# records: $(grep -c . "$out/raw.txt") in the trace, perf script: $(grep -c . "$out/script.txt") branches"
sed 's/^/# record: /' "$out/raw.txt" | head -16
check "perf record -e intel_bts//u --per-thread: exit 0" grep -qx 'rc 0' "$vm/record.log"
check "perf script: exit 0, no decoding error" \
	bash -c "grep -qx 'rc 0' '$vm/script.log' && ! grep -qi 'error\|failed' '$vm/script.log' '$vm/branches.txt'"
check "records: the program's branches, from and to of each, in order ($(grep -c . "$out/want.txt") expected)" \
	diff "$out/want.txt" "$out/got-raw.txt"
check "perf script --itrace=b: the same branches" diff "$out/want.txt" "$out/got-script.txt"
k1=$(awk -v s="$sc1" '$1 == s { print $2; exit }' "$out/raw.txt")
k2=$(awk -v s="$sc2" '$1 == s { print $2; exit }' "$out/raw.txt")
check "both SYSCALLs recorded, from the SYSCALL, to a kernel address ($k1, $k2)" \
	bash -c "case '$k1 $k2' in ffffffff*' 'ffffffff*) true ;; *) false ;; esac"
# Every other record from the program (exceptions: page faults) comes
# from the address of an instruction, the one that faulted.
insns=$(echo "$dis" | awk -F'\t' '/^ *[0-9a-f]+:\t/ { a = $1; sub(/^ */, "", a); sub(/:$/, "", a); print a }')
bad=$(while read -r a b; do
	user "$a" || continue
	grep -qx "$a" <<< "$insns" || echo "$a"
done < "$out/raw.txt" | grep -c .)
nexc=$(while read -r a b; do user "$a" && ! user "$b" && echo "$a"; done < "$out/raw.txt" | grep -c .)
check "every record from the program starts at an instruction ($nexc to the kernel, $bad not at an instruction)" \
	[ "$bad" = 0 ]
check "no record from kernel code in a user-only trace" \
	bash -c "! grep -q '^ffff' '$out/raw.txt'"
check "perf record -e intel_bts// (user and kernel): exit 0" grep -qx 'rc 0' "$vm/record-k.log"
nk=$(grep -c '^ *ffff' "$vm/branches-k.txt" 2>/dev/null)
check "user and kernel: records from kernel code ($nk)" [ "${nk:-0}" -gt 0 ]
# itrace record --pmu intel_bts and itrace decode of its records: the
# instructions between the branches rebuilt from the ELF, the same as the
# PT decode of the same (static, no-PIE) program
check "itrace record --pmu intel_bts: exit 0" grep -qx 'rc 0' "$vm/itrace-bts.log"
check "itrace record (intel_pt) of the same program: exit 0" grep -qx 'rc 0' "$vm/itrace-pt.log"
it=$BUILD/tools/itrace/itrace
for k in bts pt; do
	"$it" decode --stats --exe "$out/bts-prog" "$vm/bts-prog.$k.itrace" \
		> "$out/itrace-$k.stats" 2> "$out/itrace-$k.err"
	echo "rc $?" >> "$out/itrace-$k.stats"
done
ib=$(awk '$1 == "total" && $2 == "insns" { print $3 }' "$out/itrace-bts.stats")
ip=$(awk '$1 == "total" && $2 == "insns" { print $3 }' "$out/itrace-pt.stats")
eb=$(awk '$1 == "total" && $2 == "errors" { print $3 }' "$out/itrace-bts.stats")
tb=$(grep '^total' "$out/itrace-bts.stats" | grep -v 'errors\|gaps' | md5sum)
tp=$(grep '^total' "$out/itrace-pt.stats" | grep -v 'errors\|gaps' | md5sum)
check "itrace decode of the BTS recording: exit 0, ${ib:-?} instructions, ${eb:-?} errors" \
	bash -c "grep -qx 'rc 0' '$out/itrace-bts.stats' && [ '${eb:-1}' = 0 ] && [ '${ib:-0}' -gt 0 ]"
check "BTS and PT decodes agree: ${ib:-?} and ${ip:-?} instructions, same totals" \
	[ "${ib:-0}" = "${ip:-1}" -a "$tb" = "$tp" ]
# intel_bts registered with itrace: trace fds in stop mode
retap "kselftest bts: " "$vm/kselftest-bts.tap"
check "kselftest bts: ran to the end, nothing skipped" \
	bash -c "grep -qx '# exit status 0' '$vm/kselftest-bts.tap' && ! grep -q SKIP '$vm/kselftest-bts.tap'"
# a user's BTS event is never refused because of the core-dump trace;
# intel_bts notes; a user's PT event beside them
retap "kselftest rlimit_itrace: " "$vm/kselftest-rlimit.tap"
for t in bts_event_beside_core_trace bts_core_note bts_core_note_wrapped \
	bts_core_limit_clamps_records pt_event_beside_bts_core_trace; do
	check "kselftest rlimit_itrace: $t ran and passed" \
		grep -q "^ok .* rlimit\.$t\$" "$vm/kselftest-rlimit.tap"
done
check "kselftest rlimit_itrace: exit 0, nothing skipped" \
	bash -c "grep -qx '# exit status 0' '$vm/kselftest-rlimit.tap' && ! grep -q SKIP '$vm/kselftest-rlimit.tap'"
# itrace core of intel_bts notes: the known paths, as with intel_pt
check "intel_bts selected for core dumps (itrace/coredump reads 1)" \
	grep -qx 1 "$vm/bts-coredump-selected.txt"
for p in crashnull crashabort crashplt; do
	why=$("$top/tools/testing/itrace/guest/coredump.sh" --match \
		"$top/tools/testing/itrace/progs/$p.core-expect" "$vm/core-bts-$p.txt")
	mrc=$?
	check "itrace core of the intel_bts core of $p: exit 0, the known path${why:+ ($why)}" \
		bash -c "grep -qx 'rc 0' '$vm/core-bts-$p.txt' && grep -q ', intel_bts config 0x0\$' '$vm/core-bts-$p.txt' && [ $mrc = 0 ]"
done
# itrace record --pmu intel_bts -e: samples with BTS records, reported on
# the host: every page fault in toucher() (32) and every call of target()
# (71) sampled, each trace decoded and ending at the sample's ip
for name in pf bp; do
	"$it" report --samples --json "$vm/bts-samples/$name.itrace" \
		> "$out/bts-samples-$name.json" 2> "$out/bts-samples-$name.err"
	echo $? > "$out/bts-samples-$name.rc"
done
samp=$(python3 - "$vm/bts-samples" "$out" <<'PY'
import json, sys
vm, out = sys.argv[1], sys.argv[2]
def sym(loc):
    return loc.get("symbol") if loc else None
for name, where, want in (("pf", "toucher", 32), ("bp", "target", 71)):
    try:
        rc = open(f"{vm}/{name}.rc").read().strip()
        d = json.load(open(f"{out}/bts-samples-{name}.json"))
    except (OSError, ValueError) as e:
        print(f"{name}: no report ({e})")
        continue
    ss = [s for s in d["samples"] if sym(s["ip"]) == where]
    ends = [s for s in ss if s["trace"] == "decoded" and s.get("end_is_ip")]
    print(f"{name}: record exit {rc}, {len(ss)} samples in {where}, {len(ends)} end at the ip"
          + ("" if rc == "0" and len(ss) == want == len(ends) else f" BAD (want {want})"))
PY
)
check "itrace report of BTS samples: $(echo $samp)" \
	bash -c "[ -n '$samp' ] && ! echo '$samp' | grep -q 'BAD\|no report' && [ \$(echo '$samp' | wc -l) = 2 ]"
echo "1..$n"
[ $fail -eq 0 ]
