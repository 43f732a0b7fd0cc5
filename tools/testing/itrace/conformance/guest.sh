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
#   $OUT/NAME.rc        "RECORD_RC SSTEP_RC RECORD_K_RC PERF_RC", each the
#                       program's exit status (perf record's for PERF_RC)
#   $OUT/all.kperf.data perf record --kcore -e intel_pt// of the
#                       PERF_KERNEL_PROGS run one after the other by
#                       sstep -m (a directory: perf.data and kcore_dir/, the
#                       live kernel text perf copied from /proc/kcore);
#                       their output and status in $OUT/kperf/NAME.{out,err,rc}
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
	echo "$rec $ss $krec $prec" > "$OUT/$name.rc"
	# also on the console: the host sees progress even if the VM times out
	echo "conformance: $name: record rc $rec, sstep rc $ss, record -k rc $krec," \
		"perf record rc $prec, $(tail -n1 "$OUT/$name.ss-log")," \
		"times sstep $(echo "$t0 $t1" | awk '{ print $2 - $1 }') s," \
		"record $(echo "$t1 $t2" | awk '{ print $2 - $1 }') s," \
		"record -k $(echo "$t2 $t3" | awk '{ print $2 - $1 }') s," \
		"perf record $(echo "$t3 $t4" | awk '{ print $2 - $1 }') s" | tee /dev/console
done < "$dir/corpus.list"

# upstream perf, user and kernel mode (-e intel_pt//): the programs of
# PERF_KERNEL_PROGS in one perf record, one after the other (sstep -m, the
# same environment, descriptors and working directory): perf starts once
# (~4 s here), not once per program.  Outputs and exit statuses in
# $OUT/kperf/NAME.{out,err,rc}, perf's messages in $OUT/all.kperf-log.
# --kcore: perf copies the running kernel text (/proc/kcore, after opening
# its events: alternatives, static keys and jump labels as patched) into
# all.kperf.data/kcore_dir, which perf script decodes kernel code from; the
# host's libipt decode of the itrace record -k recordings uses it too.
if [ -n "$perf" ] && [ -n "$(echo $kprogs)" ]; then
	mkdir -p "$OUT/kperf"
	list=
	for k in $kprogs; do list="$list $dir/$k"; done
	t0=$(now)
	env -i PATH=/bin:/usr/bin HOME=/tmp timeout 600 "$dir/sstep" -x -- \
		$perf record --kcore -e intel_pt// -o "$OUT/all.kperf.data" -- "$dir/sstep" -m "$OUT/kperf" -- $list \
		</dev/null >"$OUT/all.kperf-out" 2>"$OUT/all.kperf-log"
	echo $? > "$OUT/all.kperf.rc"
	t1=$(now)
	echo "conformance: perf record -e intel_pt// of$kprogs: rc $(cat "$OUT/all.kperf.rc")," \
		"$(echo "$t0 $t1" | awk '{ print $2 - $1 }') s" | tee /dev/console
fi

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
