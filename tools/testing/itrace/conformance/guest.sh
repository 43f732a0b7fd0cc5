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
#   $OUT/NAME.bts       itrace record --pmu intel_bts's recording (the CPU
#                       has +ds), NAME.bts-log, NAME.bts-out; perf record
#                       -e intel_bts//u --per-thread's NAME.bts.perf.data
#   $OUT/NAME.rc        "RECORD_RC SSTEP_RC RECORD_K_RC PERF_RC BTS_RC
#                       BTS_PERF_RC", each the program's exit status (perf
#                       record's for the PERF ones; "none": not run)
#   $OUT/pmu.stat       perf stat -x, --per-thread -e instructions:u,
#                       branches:u of every program's window (the one
#                       sstep steps), run at full speed (sstep -c); its
#                       threads' ids in NAME.pmu-tid, NAME.pmu-rc
#                       "SSTEP_RC PERF_RC", sstep's messages NAME.pmu-log
#   $OUT/all.kperf.data perf record --kcore -e intel_pt// of the
#                       PERF_KERNEL_PROGS run one after the other by
#                       sstep -m (a directory: perf.data and kcore_dir/, the
#                       live kernel text perf copied from /proc/kcore);
#                       their output and status in $OUT/kperf/NAME.{out,err,rc}
#   $OUT/sw.kperf.data  the same of threads and fork alone, sw.kperf.rc
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
	# user and kernel mode (-k), the first thread only: kcut's copy of
	# the recording keeps no sample ids, so its decode could not tell
	# the threads apart
	env -i PATH=/bin:/usr/bin HOME=/tmp timeout 60 "$dir/sstep" -x -- \
		"$itrace" record -k --no-inherit -m 4096 -o "$OUT/$name.kitrace" -- "$p" \
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
	# Branch Trace Store (a CPU model with +ds, check.sh): the same run
	# recorded by itrace record --pmu intel_bts and by perf record -e
	# intel_bts//u --per-thread (BTS's only mode in perf).  No PMI
	# throttling meanwhile: the emulated PMI handler copies thousands of
	# records slowly, and a throttled event loses them.
	brec=none bprec=none
	if [ -d /sys/bus/event_source/devices/intel_bts ]; then
		cpu_pct=$(cat /proc/sys/kernel/perf_cpu_time_max_percent)
		echo 0 > /proc/sys/kernel/perf_cpu_time_max_percent
		env -i PATH=/bin:/usr/bin HOME=/tmp timeout 60 "$dir/sstep" -x -- \
			"$itrace" record --pmu intel_bts -o "$OUT/$name.bts" -- "$p" \
			</dev/null >"$OUT/$name.bts-out" 2>"$OUT/$name.bts-log"
		brec=$?
		if [ -n "$perf" ]; then
			env -i PATH=/bin:/usr/bin HOME=/tmp timeout 120 "$dir/sstep" -x -- \
				$perf record -e intel_bts//u --per-thread -o "$OUT/$name.bts.perf.data" -- "$p" \
				</dev/null >"$OUT/$name.bts-perf-out" 2>"$OUT/$name.bts-perf-log"
			bprec=$?
		fi
		echo "$cpu_pct" > /proc/sys/kernel/perf_cpu_time_max_percent
	fi
	t5=$(now)
	echo "$rec $ss $krec $prec $brec $bprec" > "$OUT/$name.rc"
	# also on the console: the host sees progress even if the VM times out
	echo "conformance: $name: record rc $rec, sstep rc $ss, record -k rc $krec," \
		"perf record rc $prec, $(tail -n1 "$OUT/$name.ss-log")," \
		"times sstep $(echo "$t0 $t1" | awk '{ print $2 - $1 }') s," \
		"record $(echo "$t1 $t2" | awk '{ print $2 - $1 }') s," \
		"record -k $(echo "$t2 $t3" | awk '{ print $2 - $1 }') s," \
		"perf record $(echo "$t3 $t4" | awk '{ print $2 - $1 }') s," \
		"intel_bts rc $brec and $bprec, $(echo "$t4 $t5" | awk '{ print $2 - $1 }') s" | tee /dev/console
done < "$dir/corpus.list"

# The emulated CPU's counters: Debian's perf stat counts user-mode
# instructions and branches of each program's window, the one sstep
# steps above, run at full speed.  One perf stat for all (it starts in
# seconds here): each program waits at START under its sstep -c, perf stat
# attaches to all of them (-t, --per-thread, no inherit) with its counters
# disabled, enables them (--control), and the windows run one after the
# other while the others wait stopped; it disables them once all are done.
if [ -n "$perf" ]; then
	p=/tmp/pmu
	rm -rf $p && mkdir -p $p
	tids=
	while read -r name start end; do
		mkdir -p $p/$name
		s="-s $start"
		[ "$end" = ret ] && s="$s -r"
		env -i PATH=/bin:/usr/bin HOME=/tmp timeout 600 "$dir/sstep" -c $p/$name $s -- "$dir/$name" \
			</dev/null >"$OUT/$name.pmu-out" 2>"$OUT/$name.pmu-log" &
		echo $! > $p/$name/sstep
		i=0
		while [ ! -s $p/$name/pid ] && [ $i -lt 600 ] && kill -0 "$(cat $p/$name/sstep)" 2>/dev/null; do
			sleep 0.1
			i=$((i + 1))
		done
		cp $p/$name/pid "$OUT/$name.pmu-tid" 2>/dev/null && tids="$tids,$(cat $p/$name/pid)"
	done < "$dir/corpus.list"
	mkfifo $p/ctl $p/ack
	t0=$(now)
	timeout 900 $perf stat --no-inherit --per-thread -t "${tids#,}" -D -1 \
		--control fifo:$p/ctl,$p/ack -x, -e instructions:u,branches:u \
		-o "$OUT/pmu.stat" >"$OUT/pmu-perf.log" 2>&1 &
	perf_pid=$!
	# a --control command and perf's "ack" (time-limited: perf may fail)
	ctl() { timeout 120 sh -c "echo $1 > $p/ctl && read -r a < $p/ack && [ \"\$a\" = ack ]"; }
	ctl enable
	while read -r name start end; do
		[ -s $p/$name/pid ] || continue
		echo go > $p/$name/go
		i=0
		while [ ! -f $p/$name/done ] && [ $i -lt 1200 ] && kill -0 "$(cat $p/$name/sstep)" 2>/dev/null; do
			sleep 0.1
			i=$((i + 1))
		done
	done < "$dir/corpus.list"
	ctl disable
	while read -r name start end; do
		[ "$end" = ret ] && [ -f $p/$name/done ] && echo go > $p/$name/go
		wait "$(cat $p/$name/sstep)"
		echo $? > $p/$name/rc
	done < "$dir/corpus.list"
	wait $perf_pid
	prc=$?
	while read -r name start end; do
		echo "$(cat $p/$name/rc) $prc" > "$OUT/$name.pmu-rc"
	done < "$dir/corpus.list"
	echo "conformance: perf stat of the windows: rc $prc, $(echo "$(now) $t0" | awk '{ print $1 - $2 }') s" |
		tee /dev/console
fi

# upstream perf, user and kernel mode (-e intel_pt//): the programs of
# PERF_KERNEL_PROGS in one perf record, one after the other (sstep -m, the
# same environment, descriptors and working directory): perf starts once
# (~4 s here), not once per program.  Outputs and exit statuses in
# $OUT/kperf/NAME.{out,err,rc}, perf's messages in $OUT/all.kperf-log.
# --kcore: perf copies the running kernel text (/proc/kcore, after opening
# its events: alternatives, static keys and jump labels as patched) into
# all.kperf.data/kcore_dir, which perf script decodes kernel code from; the
# host's libipt decode of the itrace record -k recordings uses it too.
# -m ,128M: an AUX area 32 times perf's default, larger than the whole
# trace of the run (54 MB), so that a perf slowed down by a loaded host
# (make check runs host checks beside this guest) loses none of it even if
# it reads nothing before the end: "AUX data lost" was seen at 4M, and at
# 32M once (29 times out of 1076, perf woken 3 times; decode errors where
# the trace was cut).
if [ -n "$perf" ] && [ -n "$(echo $kprogs)" ]; then
	mkdir -p "$OUT/kperf"
	list=
	for k in $kprogs; do list="$list $dir/$k"; done
	t0=$(now)
	env -i PATH=/bin:/usr/bin HOME=/tmp timeout 600 "$dir/sstep" -x -- \
		$perf record --kcore -e intel_pt// -m ,128M -o "$OUT/all.kperf.data" -- "$dir/sstep" -m "$OUT/kperf" -- $list \
		</dev/null >"$OUT/all.kperf-out" 2>"$OUT/all.kperf-log"
	echo $? > "$OUT/all.kperf.rc"
	t1=$(now)
	echo "conformance: perf record -e intel_pt// of$kprogs: rc $(cat "$OUT/all.kperf.rc")," \
		"$(echo "$t0 $t1" | awk '{ print $2 - $1 }') s" | tee /dev/console
fi

# perf record -e intel_pt// of threads and fork alone, run by sstep -m: the
# events of a process's threads, and of a parent and its children, are
# clones, and go on through their context switches (no PERF_RECORD_AUX
# between them); verify.sh compares each thread's instruction count
# (perf script --itrace=i1i, the whole recording) with itrace decode's.
# Small, so that perf script decodes every instruction in seconds.
if [ -n "$perf" ] && [ -x "$dir/threads" ] && [ -x "$dir/fork" ]; then
	mkdir -p "$OUT/swperf"
	env -i PATH=/bin:/usr/bin HOME=/tmp timeout 300 "$dir/sstep" -x -- \
		$perf record --kcore -e intel_pt// -m ,32M -o "$OUT/sw.kperf.data" -- \
		"$dir/sstep" -m "$OUT/swperf" -- "$dir/threads" "$dir/fork" \
		</dev/null >"$OUT/sw.kperf-out" 2>"$OUT/sw.kperf-log"
	echo $? > "$OUT/sw.kperf.rc"
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
