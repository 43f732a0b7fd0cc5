#!/bin/bash
# `make series-check`: every step of the kernel series (the patch stack of
# tools/testing/itrace/series/kernel/, series/README) is applied in turn to
# the pristine base in one worktree, build/series/steps, and at each step:
#   - the patch has no drift from the overlay at the end (series.sh
#     --check, once, before the steps);
#   - checkpatch.pl --strict on the patch (series-lib.sh; not with
#     --no-checkpatch, for make check, where series.sh --checkpatch has
#     just checked the same patches);
#   - the objects of the C files the patch touches are compiled with W=1
#     and the test kernel's .config (build/series/steps-obj), and those of
#     every C file the series touched so far when the patch changes a
#     header; a warning in a file the series touches fails the step;
#   - where the patch touches a uAPI header or a selftest directory, the
#     uAPI headers are installed and the selftests that exist at that step
#     (itrace, perf_events) are built against them;
#   - where it touches MAINTAINERS, the series' entry has an M: line and
#     each of its F: patterns matches a file of that step.
# That is the cheap form, part of make check; it does not link, so a
# call into code of a later patch shows only in the full form: with
# --full, each step also builds the whole test kernel (bzImage,
# incremental), and an allnoconfig kernel with only CONFIG_PERF_EVENTS
# and the x86 PMU drivers on.  With --boot (make series-check does
# --full --boot), each step that adds or changes selftests also boots
# its own test kernel in the QEMU guest (run-vm.sh, the test bed's
# initramfs and CPU, +ds for the BTS tests) and runs the selftest
# programs whose sources the patch touched, built at that step: the
# feature the steps before it added, tested where it lands.
#
# Prints TAP; exit 1 if a step failed.  SERIES_STACK=DIR checks another stack;
# SERIES_JOBS=N compiles with make -jN (default: the number of CPUs).
set -uo pipefail
: "${BUILD:?}"
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../../.." && pwd)
. "$here/series-lib.sh"
stack=${SERIES_STACK:-$top/tools/testing/itrace/series/kernel}
full= checkpatch=1 boot=
for a in "$@"; do
	case $a in
	--full) full=1 ;;
	--boot) boot=1 ;;
	--no-checkpatch) checkpatch= ;;
	*) echo "usage: series-check.sh [--full] [--boot] [--no-checkpatch]" >&2; exit 2 ;;
	esac
done
out=$BUILD/series
linux=$BUILD/linux
wt=$out/steps obj=$out/steps-obj nobj=$out/steps-obj-tiny
log=$out/steps-log
export PATH=/usr/lib/ccache:$PATH
jobs=${SERIES_JOBS:-$(nproc)}	# make -j (make check's second lane: 1)
mkdir -p "$out" "$log"
n=0 rc=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); rc=1; echo "not ok $n - $*"; }

# SERIES_CHECK_NO_DRIFT=1: skip the drift check (to check the steps of a
# mutated stack; make check, right after series.sh checked the drift).
if [ -n "${SERIES_CHECK_NO_DRIFT:-}" ]; then
	echo "# drift check skipped (SERIES_CHECK_NO_DRIFT)"
elif SERIES_STACK=$stack "$here/series.sh" --check > "$log/drift.txt" 2>&1; then
	ok "the stack gives the overlay's kernel files byte for byte"
else
	notok "drift between the stack and the overlay: $(grep -m1 '^series:' "$log/drift.txt")"
	echo "1..$n"
	exit 1
fi
base=$(git -C "$linux" rev-list --max-parents=0 HEAD)
mapfile -t patches < <(series_patches "$stack")

# One full worktree, kept between runs: going back to the base and
# applying the stack again only touches the series' files.
if [ ! -e "$wt/.git" ]; then
	git -C "$linux" worktree prune
	git -C "$linux" worktree add -q --detach "$wt" "$base" || { notok "worktree $wt"; exit 1; }
fi
git -C "$wt" am --abort > /dev/null 2>&1
git -C "$wt" reset -q --hard "$base" && git -C "$wt" clean -qfdx ||
	{ notok "worktree $wt back to the base"; exit 1; }

cfg() {	# cfg OBJ: the test kernel's .config, or allnoconfig + perf
	mkdir -p "$1"
	if [ "$1" = "$obj" ]; then
		cp "$BUILD/linux-obj/.config" "$1/.config"
	else
		make -s -C "$wt" O="$1" allnoconfig > /dev/null
		cat >> "$1/.config" <<-EOF
		CONFIG_64BIT=y
		CONFIG_PERF_EVENTS=y
		CONFIG_CPU_SUP_INTEL=y
		CONFIG_ELF_CORE=y
		CONFIG_COREDUMP=y
		CONFIG_BINFMT_ELF=y
		EOF
	fi
	make -s -C "$wt" O="$1" olddefconfig > /dev/null
}
[ -f "$BUILD/linux-obj/.config" ] || { notok "no $BUILD/linux-obj/.config (make first)"; exit 1; }
if ! cfg "$obj" > "$log/prepare.txt" 2>&1 ||
   ! make -s -C "$wt" O="$obj" -j"$jobs" CC="ccache gcc" prepare >> "$log/prepare.txt" 2>&1; then
	notok "prepare $obj at the base: $(tail -1 "$log/prepare.txt")"
	echo "1..$n"
	exit 1
fi
if [ -n "$full" ] && ! cfg "$nobj" > "$log/prepare-tiny.txt" 2>&1; then
	notok "allnoconfig + perf config: $(tail -1 "$log/prepare-tiny.txt")"
fi

# boot_step NAME LOG TEST...: boot the step's kernel ($obj) in the guest,
# run each TEST program there (guest/series-step.sh) and report one TAP
# line per program: its kselftest exit status and totals.
boot_step() {
	local name=$1 l=$2 res=$2.boot rc=0 cpu= t b tap st totals
	shift 2
	for t in "$@"; do
		case $(basename "$t") in bts*) cpu=+ds ;; esac
	done
	ITRACE_KERNEL=$obj/arch/x86/boot/bzImage ITRACE_CPU_OPTS=$cpu \
		"$here/run-vm.sh" -t 1800 -o "$res" "$top/tools/testing/itrace/guest/series-step.sh" \
		"$@" > "$l.run-vm" 2>&1 || rc=$?
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
		# 1: a test failed (reported below); else the guest did not run
		notok "$name: boot: run-vm.sh exit $rc ($(tail -1 "$l.run-vm")), see $res"
		return
	fi
	for t in "$@"; do
		b=$(basename "$t")
		tap=$res/$b.tap
		st=$(sed -n 's/^# exit status //p' "$tap" 2>/dev/null | tail -1)
		totals=$(grep -a -m1 '^# Totals:' "$tap" 2>/dev/null | sed 's/^# Totals: //')
		case $st in
		0) ok "$name: boot: $b passes on this step's kernel (${totals:-no totals})" ;;
		4) ok "$name: boot: $b # SKIP on this step's kernel (${totals:-no totals})" ;;
		*) notok "$name: boot: $b exit ${st:-none} on this step's kernel (${totals:-no totals}), see $tap" ;;
		esac
	done
}

# The series' MAINTAINERS entry (its heading line)
maint_entry="PERFORMANCE EVENTS ITRACE (INSTRUCTION FLOW TRACING)"

declare -A seen_c=()
step=0
for p in "${patches[@]}"; do
	step=$((step + 1))
	name="step $step/${#patches[@]} $(basename "$p" .patch)"
	l=$log/$(printf %02d $step)
	if ! git -C "$wt" -c user.name=series -c user.email=series@invalid \
		am -q --committer-date-is-author-date "$p" > "$l.am" 2>&1; then
		notok "$name: git am: $(head -1 "$l.am")"
		git -C "$wt" am --abort > /dev/null 2>&1
		break
	fi
	mapfile -t touched < <(git -C "$wt" diff --name-only HEAD~1 HEAD)

	if [ -z "$checkpatch" ]; then
		:
	elif checkpatch_run "$p" "$wt" "$l.checkpatch"; then
		ok "$name: checkpatch --strict"
	else
		notok "$name: checkpatch --strict: $(grep -cE '^(ERROR|WARNING|CHECK)' "$l.checkpatch") reports, see $l.checkpatch"
	fi

	# The objects to compile: this patch's C files, and every C file
	# of the series so far when it changes a header.
	hdr= uapi= st=
	objs=()
	for f in "${touched[@]}"; do
		case $f in
		tools/testing/selftests/*) st=1 ;;
		include/uapi/*) uapi=1; hdr=1 ;;
		*.h) hdr=1 ;;
		*.c) [ -f "$wt/$f" ] && seen_c[$f]=1 && objs+=("${f%.c}.o") ;;
		esac
	done
	if [ -n "$hdr" ]; then
		objs=()
		for f in "${!seen_c[@]}"; do
			[ -f "$wt/$f" ] && objs+=("${f%.c}.o")
		done
	fi
	if [ "${#objs[@]}" -gt 0 ]; then
		mapfile -t objs < <(printf '%s\n' "${objs[@]}" | sort)
		if make -C "$wt" O="$obj" -j"$jobs" CC="ccache gcc" W=1 "${objs[@]}" \
			> "$l.build" 2>&1; then
			# warnings in a file the series touches
			warn=$(grep -E '^[^ ]+:[0-9]+:[0-9]+: warning:' "$l.build" |
				while IFS=: read -r file _; do
					file=${file##*/steps/}
					[ -n "${seen_c[$file]:-}" ] && echo "$file"
				done | wc -l)
			if [ "$warn" = 0 ]; then
				ok "$name: W=1 compiles ${#objs[@]} objects, no warning in the series' files"
			else
				notok "$name: W=1: $warn warnings in the series' files, see $l.build"
			fi
		else
			notok "$name: compiling ${objs[*]}: $(grep -m1 -E 'error' "$l.build"), see $l.build"
		fi
	else
		ok "$name: no C file to compile"
	fi

	if [ -n "$uapi$st" ]; then
		sel=()
		for d in itrace perf_events; do
			[ -d "$wt/tools/testing/selftests/$d" ] && sel+=("$d")
		done
		if ! make -s -C "$wt" O="$obj" headers_install INSTALL_HDR_PATH="$obj/usr" \
			> "$l.selftests" 2>&1; then
			notok "$name: headers_install, see $l.selftests"
		else
			bad=
			for d in "${sel[@]}"; do
				so=$out/steps-selftests/$d
				rm -rf "$so" && mkdir -p "$so"
				if [ "$d" = perf_events ]; then
					# upstream's against the C library's uAPI
					# headers, as the top Makefile builds them;
					# the series' own (aux_fixes) against the
					# kernel's, once it exists
					# (the lists: perf-events-tests.sh, as the
					# top Makefile has them)
					read -r -a up <<< "$("$here/perf-events-tests.sh" --upstream "$linux")"
					read -r -a new <<< "$("$here/perf-events-tests.sh" --new "$wt" "$linux")"
					args=(KHDR_INCLUDES= TEST_GEN_PROGS="${up[*]/#/$so/}")
					if [ ${#new[@]} -gt 0 ]; then
						make -s -C "$wt/tools/testing/selftests/$d" OUTPUT="$so" \
							KHDR_INCLUDES="-isystem $obj/usr/include" \
							TEST_GEN_PROGS="${new[*]/#/$so/}" \
							>> "$l.selftests" 2>&1 || bad+=" $d/${new[*]}"
					fi
				else
					args=(KHDR_INCLUDES="-isystem $obj/usr/include")
				fi
				make -s -C "$wt/tools/testing/selftests/$d" OUTPUT="$so" "${args[@]}" \
					>> "$l.selftests" 2>&1 || bad+=" $d"
			done
			if [ -z "$bad" ]; then
				ok "$name: selftests at this step build (${sel[*]})"
			else
				notok "$name: selftests do not build:$bad, see $l.selftests"
			fi
		fi
	fi

	# MAINTAINERS: the series' entry has a maintainer, and each of its
	# F: patterns matches a file at this step (what get_maintainer.pl
	# --self-test=patterns checks, for this entry alone).
	if printf '%s\n' "${touched[@]}" | grep -qx MAINTAINERS; then
		entry=$(awk -v h="$maint_entry" '$0 == h { e = 1 } e && /^$/ { exit } e' "$wt/MAINTAINERS")
		nomatch=$(printf '%s\n' "$entry" | sed -n 's/^F:\t*//p' | while read -r pat; do
			[ -n "$(git -C "$wt" ls-files -- "$pat" | head -1)" ] || printf ' %s' "$pat"
		done)
		if [ -z "$entry" ]; then
			notok "$name: MAINTAINERS has no entry \"$maint_entry\""
		elif ! printf '%s\n' "$entry" | grep -q '^M:'; then
			notok "$name: MAINTAINERS entry \"$maint_entry\" has no M: line"
		elif [ -n "$nomatch" ]; then
			notok "$name: MAINTAINERS F: patterns that match no file:$nomatch"
		else
			ok "$name: MAINTAINERS entry has an M: line and $(printf '%s\n' "$entry" | grep -c '^F:') F: patterns, each matching files"
		fi
	fi

	bz_ok=
	if [ -n "$full" ]; then
		for o in "$obj" "$nobj"; do
			if make -s -C "$wt" O="$o" -j"$jobs" CC="ccache gcc" bzImage > "$l.bzimage" 2>&1; then
				ok "$name: bzImage ($(basename "$o"))"
				[ "$o" = "$obj" ] && bz_ok=1
			else
				notok "$name: bzImage ($(basename "$o")): $(grep -m1 -E 'error|undefined reference' "$l.bzimage"), see $l.bzimage"
			fi
		done
	fi

	# --boot: the selftest programs this patch adds or changes, built at
	# this step, run on this step's kernel.
	tests=()
	if [ -n "$boot" ] && [ -n "$st" ]; then
		for f in "${touched[@]}"; do
			case $f in
			tools/testing/selftests/itrace/*.c | tools/testing/selftests/perf_events/*.c)
				d=${f#tools/testing/selftests/}
				b=$out/steps-selftests/${d%.c}
				[ -x "$b" ] && tests+=("$b")
				;;
			esac
		done
	fi
	if [ "${#tests[@]}" -gt 0 ]; then
		if [ -z "$bz_ok" ] && ! make -s -C "$wt" O="$obj" -j"$jobs" CC="ccache gcc" \
			bzImage > "$l.bzimage" 2>&1; then
			notok "$name: bzImage to boot: $(grep -m1 -E 'error|undefined reference' "$l.bzimage"), see $l.bzimage"
		else
			boot_step "$name" "$l" "${tests[@]}"
		fi
	fi
done
echo "1..$n"
exit $rc
