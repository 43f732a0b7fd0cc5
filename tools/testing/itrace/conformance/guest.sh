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
cd /tmp
while read -r name start end; do
	p=$dir/$name
	s="-s $start"
	[ "$end" = ret ] && s="$s -r"
	t0=$(cut -d' ' -f1 /proc/uptime)
	env -i PATH=/bin:/usr/bin HOME=/tmp timeout 60 "$dir/sstep" -o "$OUT/$name.ss" $s -- "$p" \
		</dev/null >"$OUT/$name.ss-out" 2>"$OUT/$name.ss-log"
	ss=$?
	t1=$(cut -d' ' -f1 /proc/uptime)
	env -i PATH=/bin:/usr/bin HOME=/tmp timeout 60 "$dir/sstep" -x -- \
		"$itrace" record -o "$OUT/$name.itrace" -- "$p" \
		</dev/null >"$OUT/$name.out" 2>"$OUT/$name.log"
	rec=$?
	t2=$(cut -d' ' -f1 /proc/uptime)
	echo "$rec $ss" > "$OUT/$name.rc"
	# also on the console: the host sees progress even if the VM times out
	echo "conformance: $name: record rc $rec, sstep rc $ss," \
		"$(tail -n1 "$OUT/$name.ss-log")," \
		"times sstep $(echo "$t0 $t1" | awk '{ print $2 - $1 }') s," \
		"record $(echo "$t1 $t2" | awk '{ print $2 - $1 }') s" | tee /dev/console
done < "$dir/corpus.list"
sync
exit 0
