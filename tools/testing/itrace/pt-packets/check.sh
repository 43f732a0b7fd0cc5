#!/bin/bash
# All emulated Intel PT checks as one TAP stream ("ok N name" /
# "not ok N name", "#" comments, "1..N" at the end); exits non-zero if any
# failed.  A script that ends without its plan line ("1..N") died on the
# way: that is a failure too, not a silently shorter stream.  Needs the
# built QEMU and, for run.sh, migrate.sh and pmi.sh, the bzImage (pmi.sh:
# also the initramfs with the itrace tool).
#
# Last, the packet coverage table (README.md, "Packet coverage"): every
# packet type the emulator's source can emit must have been parsed back by
# libipt, in the field variants listed below, from at least one of the
# traces the scripts decoded (ptcheck's "# kinds TRACE: ..." lines).
#
#   tools/testing/itrace/pt-packets/check.sh [BUILD]
here=$(cd "$(dirname "$0")" && pwd)
emu=$here/../qemu/target/i386/tcg/sysemu/intel-pt.c
n=0 fail=0
declare -A seen	# kind -> "script:trace ..." that had it
for t in msr-test run migrate pmi pmu-test pmu bts-test bts perf-tests; do
	plan=
	while read -r line; do
		case $line in
		"ok "*) n=$((n + 1)); echo "ok $n $t: $(echo "$line" | sed -E 's/^ok [0-9]+ //')" ;;
		"not ok "*) n=$((n + 1)); fail=$((fail + 1))
			echo "not ok $n $t: $(echo "$line" | sed -E 's/^not ok [0-9]+ //')" ;;
		"# kinds "*)
			echo "$line"
			read -r -a w <<< "$line"
			trace=${w[2]%:}
			for kv in "${w[@]:3}"; do
				seen[${kv%=*}]+="$t:$trace "
			done ;;
		"#"*) echo "$line" ;;
		1..*) plan=1 ;;
		esac
	done < <("$here/$t.sh" "$@" 2>&1)
	if [ -z "$plan" ]; then
		n=$((n + 1)) fail=$((fail + 1))
		echo "not ok $n $t: ran to its end (no plan line: the script died)"
	fi
done

ok() { n=$((n + 1)); echo "ok $n coverage: $*"; }
notok() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n coverage: $*"; }

# The packet types the emulator emits, from its opcode definitions
# ("#define PT_NAME 0x..": PT_EXT is the 0x02 prefix of the extended
# opcodes, not a packet), and TNT, whose opcode is its stop bit.
declare -A type_of=(
	[PT_TIP_PGD]=tip.pgd [PT_TIP]=tip [PT_TIP_PGE]=tip.pge [PT_TSC]=tsc
	[PT_MTC]=mtc [PT_CYC]=cyc [PT_FUP]=fup [PT_MODE]=mode.exec
	[PT_EXT_PSB]=psb [PT_EXT_PSBEND]=psbend [PT_EXT_OVF]=ovf
	[PT_EXT_PIP]=pip [PT_EXT_CBR]=cbr [PT_EXT_TMA]=tma [PT_EXT_STOP]=stop
)
# Per type: the kinds (ptcheck's names) that must each be seen; a type's
# own name as a kind means "any variant".  Not required, because the
# emulator cannot make them for any guest: IPBytes 4 (update-48; every IP
# is a canonical 48-bit address, which IPBytes 3 always covers), IPBytes 6
# other than in the FUP after OVF (likewise), PIP with NR=1 (no VMX);
# TNT-64 and MODE.TSX are not emitted at all.
declare -A want=(
	[psb]="psb" [psbend]="psbend" [tsc]="tsc" [tma]="tma" [cbr]="cbr/36"
	[mtc]="mtc" [ovf]="ovf" [stop]="stop"
	[cyc]="cyc/1b cyc/2b cyc/3b"
	[mode.exec]="mode.exec/64 mode.exec/32 mode.exec/16"
	[tnt.8]="tnt.8/1 tnt.8/2 tnt.8/3 tnt.8/4 tnt.8/5 tnt.8/6"
	[tip]="tip/ipc1 tip/ipc2 tip/ipc3"
	[tip.pge]="tip.pge/ipc1 tip.pge/ipc2 tip.pge/ipc3 tip.pge.resume tip.pge.sync"
	[tip.pgd]="tip.pgd/ipc0 tip.pgd/ipc1 tip.pgd>stop"
	[fup]="fup/ipc1 fup/ipc2 fup.psb/ipc3 fup>tip fup>tip.pgd fup.ovf/ipc6"
	[pip]="pip/nr0 pip.psb/nr0"
)
types=()
unknown=
for d in $(sed -nE 's/^#define (PT_[A-Z0-9_]+) +0x[0-9a-fA-F]+.*/\1/p' "$emu" 2>/dev/null); do
	[ $d = PT_EXT ] && continue
	if [ -n "${type_of[$d]:-}" ]; then
		types+=("${type_of[$d]}")
	else
		unknown+=" $d"
	fi
done
grep -q '^static void pt_tnt_flush(' "$emu" 2>/dev/null && types+=(tnt.8)
if [ ${#types[@]} -ge 16 -a -z "$unknown" ]; then
	ok "the emulator's packet opcodes are all in the table (${#types[@]} types)"
else
	notok "the emulator's packet opcodes are all in the table (${#types[@]} types; unknown:${unknown:- none})"
fi
# Seen: the first two traces that had it.
where() { echo ${seen[$1]:-} | tr ' ' '\n' | awk 'NF && !s[$0]++' | head -2 | tr '\n' ' '; }
echo "# packet coverage: TYPE: KIND [traces that had it] ..."
for ty in "${types[@]}"; do
	row= missing=
	for k in ${want[$ty]:-$ty}; do
		w=$(where "$k")
		row+=" $k [${w% }]"
		[ -z "$w" ] && missing+=" $k"
	done
	echo "# packet coverage: $ty:$row"
	if [ -z "$missing" ]; then
		ok "$ty parsed back by libipt in every listed variant"
	else
		notok "$ty parsed back by libipt in every listed variant (never seen:$missing)"
	fi
done
# Seen but not listed: a packet the table does not know of, or for the
# types whose every value is listed, another value (CBR must be 36, the
# ratio MSR_PLATFORM_INFO[15:8] that msr-test reads; PIP NR must be 0;
# MODE.Exec CS.L and CS.D both set is invalid; TNT holds 1 to 6 bits).
exact=" cbr pip mode.exec tnt.8 "
extra=
for k in "${!seen[@]}"; do
	base=${k%%/*} base=${base%%>*} base=${base%.psb} base=${base%.ovf}
	case $base in tip.pge.*) base=tip.pge ;; esac
	if ! printf '%s\n' "${types[@]}" | grep -qxF "$base"; then
		extra+=" $k"
	elif [ "${exact/ $base /}" != "$exact" ] && ! echo " ${want[$base]} " | grep -qF " $k "; then
		extra+=" $k"
	fi
	# The FUP of a PSB+ carries an uncompressed IP: perf takes it before
	# it clears its last IP for the PSB.
	case $k in fup.psb/ipc[12]) extra+=" $k" ;; esac
done
for k in tip/ipc4 tip.pge/ipc4 fup/ipc4 tip/ipc6 pip/nr1 pip.psb/nr1; do
	echo "# packet coverage: not required: $k [$(where "$k")]"
done
if [ -z "$extra" ]; then
	ok "every packet kind seen is one the table lists (CBR 36, PIP NR 0, valid MODE.Exec, TNT 1-6 bits, no compressed FUP in PSB+)"
else
	notok "every packet kind seen is one the table lists (CBR 36, PIP NR 0, valid MODE.Exec, TNT 1-6 bits, no compressed FUP in PSB+; also seen:$extra)"
fi
echo "1..$n"
[ $fail -eq 0 ]
