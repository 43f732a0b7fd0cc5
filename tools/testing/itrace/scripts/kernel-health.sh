#!/bin/bash
# Fail (exit 1, printing the offending lines) when a guest console log holds
# a kernel WARN, BUG, Oops, KASAN, lockdep, kmemleak or hung-task report.
set -u
pat='WARNING: |BUG: |Oops|KASAN|UBSAN|possible recursive locking|possible circular locking|inconsistent lock state|suspicious RCU usage|unreferenced object|kmemleak: [0-9]+ new suspected|Kernel panic|general protection fault|INFO: task .* blocked|sleeping function called from invalid context|turning off the locking correctness validator|WARNING: .*lock'
if grep -Eq "$pat" "$1"; then
	echo "kernel health: report in $1:" >&2
	grep -En "$pat" "$1" | head -20 >&2
	exit 1
fi
exit 0
