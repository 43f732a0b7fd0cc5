#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest half of the conformance suite (busybox sh), run by check.sh through
# run-vm.sh.  /in/corpus is the corpus directory the host built
# (tools/testing/itrace/conformance/Makefile), /in/corpus-dir the absolute
# path it has on the host: the guest puts it at the same path, so that the
# host decodes against the very files that ran.  For each program of
# corpus.list, both runs without address randomization, same argv,
# environment, working directory and file descriptors:
#   $OUT/NAME.ss        sstep's addresses (ground truth), NAME.ss-log
#   $OUT/NAME.itrace    itrace record's recording, NAME.log (itrace's
#                       messages), NAME.out (the program's output)
#   $OUT/NAME.rc        "RECORD_RC SSTEP_RC", each the program's exit status
set -u
dir=$(cat /in/corpus-dir)
if [ ! -d "$dir" ]; then
	mkdir -p "$dir" && cp -a /in/corpus/. "$dir/" || exit 1
fi
. /etc/itrace.env
itrace=$ITRACE_BUILD/tools/itrace/itrace
# Debian's perf and its libraries, at their host paths (check.sh packs them;
# not in the shared initramfs, where they would slow every boot).
perf=
if [ -f /in/perf.tar ] && tar -xf /in/perf.tar -C / && rm -f /in/perf.tar; then
	perf=/usr/bin/perf
fi
# the programs also traced user+kernel by perf (check.sh: PERF_KERNEL_PROGS)
kprogs=" $(cat /in/perf-kernel-progs 2>/dev/null) "
now() { cut -d' ' -f1 /proc/uptime; }
cd /tmp
while read -r name start end; do
	p=$dir/$name
	s="-s $start"
	[ "$end" = ret ] && s="$s -r"
	t0=$(now)
	env -i PATH=/bin:/usr/bin HOME=/tmp timeout 60 "$dir/sstep" -o "$OUT/$name.ss" $s -- "$p" \
		</dev/null >"$OUT/$name.ss-out" 2>"$OUT/$name.ss-log"
	ss=$?
	t1=$(now)
	env -i PATH=/bin:/usr/bin HOME=/tmp timeout 60 "$dir/sstep" -x -- \
		"$itrace" record -o "$OUT/$name.itrace" -- "$p" \
		</dev/null >"$OUT/$name.out" 2>"$OUT/$name.log"
	rec=$?
	t2=$(now)
	# user and kernel mode (-k)
	env -i PATH=/bin:/usr/bin HOME=/tmp timeout 60 "$dir/sstep" -x -- \
		"$itrace" record -k -m 4096 -o "$OUT/$name.kitrace" -- "$p" \
		</dev/null >"$OUT/$name.kout" 2>"$OUT/$name.klog"
	krec=$?
	t3=$(now)
	# upstream perf: the same run, perf's own intel_pt path (AUX area)
	prec=none
	if [ -n "$perf" ]; then
		env -i PATH=/bin:/usr/bin HOME=/tmp timeout 120 "$dir/sstep" -x -- \
			$perf record -e intel_pt//u -o "$OUT/$name.perf.data" -- "$p" \
			</dev/null >"$OUT/$name.perf-out" 2>"$OUT/$name.perf-log"
		prec=$?
	fi
	t4=$(now)
	kprec=none
	case $kprogs in
	*" $name "*)
		env -i PATH=/bin:/usr/bin HOME=/tmp timeout 120 "$dir/sstep" -x -- \
			$perf record -e intel_pt// -o "$OUT/$name.kperf.data" -- "$p" \
			</dev/null >"$OUT/$name.kperf-out" 2>"$OUT/$name.kperf-log"
		kprec=$? ;;
	esac
	t5=$(now)
	echo "$rec $ss $krec $prec $kprec" > "$OUT/$name.rc"
	# also on the console: the host sees progress even if the VM times out
	echo "conformance: $name: record rc $rec, sstep rc $ss, record -k rc $krec," \
		"perf record rc $prec, $(tail -n1 "$OUT/$name.ss-log")," \
		"times sstep $(echo "$t0 $t1" | awk '{ print $2 - $1 }') s," \
		"record $(echo "$t1 $t2" | awk '{ print $2 - $1 }') s," \
		"record -k $(echo "$t2 $t3" | awk '{ print $2 - $1 }') s," \
		"perf record $(echo "$t3 $t4" | awk '{ print $2 - $1 }') s," \
		"perf record user+kernel $(echo "$t4 $t5" | awk '{ print $2 - $1 }') s" | tee /dev/console
done < "$dir/corpus.list"

# -k refused where perf_event_paranoid forbids it: an unprivileged user, 2
mkdir -p /tmp/nobody && chown nobody /tmp/nobody
old=$(cat /proc/sys/kernel/perf_event_paranoid)
echo 2 > /proc/sys/kernel/perf_event_paranoid
su -s /bin/sh -c "cd /tmp/nobody && $itrace record -k -m 16 -o k.itrace -- /bin/true" nobody \
	>"$OUT/denied.log" 2>&1
echo $? > "$OUT/denied.rc"
su -s /bin/sh -c "cd /tmp/nobody && $itrace record -m 16 -o u.itrace -- /bin/true" nobody \
	>"$OUT/undenied.log" 2>&1
echo $? > "$OUT/undenied.rc"
echo "$old" > /proc/sys/kernel/perf_event_paranoid

# perf's build-id cache: the guest's [vdso] (and copies of the ELF files),
# for perf script on the host
[ -d /tmp/.debug ] && cp -a /tmp/.debug "$OUT/perf-buildid"
sync
exit 0
