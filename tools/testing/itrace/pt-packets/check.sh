#!/bin/bash
# All emulated Intel PT checks as one TAP stream ("ok N name" /
# "not ok N name", "#" comments, "1..N" at the end); exits non-zero if any
# failed.  A script that ends without its plan line ("1..N") died on the
# way: that is a failure too, not a silently shorter stream.  Needs the
# built QEMU and, for run.sh, migrate.sh and pmi.sh, the bzImage (pmi.sh:
# also the initramfs with the itrace tool).
#
#   tools/testing/itrace/pt-packets/check.sh [BUILD]
here=$(cd "$(dirname "$0")" && pwd)
n=0 fail=0
for t in msr-test run migrate pmi; do
	plan=
	while read -r line; do
		case $line in
		"ok "*) n=$((n + 1)); echo "ok $n $t: $(echo "$line" | sed -E 's/^ok [0-9]+ //')" ;;
		"not ok "*) n=$((n + 1)); fail=$((fail + 1))
			echo "not ok $n $t: $(echo "$line" | sed -E 's/^not ok [0-9]+ //')" ;;
		"#"*) echo "$line" ;;
		1..*) plan=1 ;;
		esac
	done < <("$here/$t.sh" "$@" 2>&1)
	if [ -z "$plan" ]; then
		n=$((n + 1)) fail=$((fail + 1))
		echo "not ok $n $t: ran to its end (no plan line: the script died)"
	fi
done
echo "1..$n"
[ $fail -eq 0 ]
