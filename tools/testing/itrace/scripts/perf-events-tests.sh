#!/bin/bash
# The perf_events selftests, from their Makefile (TEST_GEN_PROGS), so that
# the top Makefile and series-check.sh build the same programs without a
# list of their own:
#   perf-events-tests.sh --upstream LINUX   upstream's, as the base commit
#       of the git tree LINUX has them: built against the C library's uAPI
#       headers (the "old binaries")
#   perf-events-tests.sh --new TREE LINUX   those the series adds in the
#       tree TREE (a build tree or a step of the series): built against
#       the kernel's uAPI headers
set -euo pipefail
progs() { sed -n 's/^TEST_GEN_PROGS[[:space:]]*:=[[:space:]]*//p' | tr -s ' \t' '\n' | grep -v '^$' || true; }
mk=tools/testing/selftests/perf_events/Makefile
upstream() {
	local base
	base=$(git -C "$1" rev-list --max-parents=0 HEAD)
	git -C "$1" show "$base:$mk" | progs
}
case ${1:-} in
--upstream)
	[ $# -eq 2 ] || { echo "usage: perf-events-tests.sh --upstream LINUX" >&2; exit 2; }
	upstream "$2" | tr '\n' ' '
	;;
--new)
	[ $# -eq 3 ] || { echo "usage: perf-events-tests.sh --new TREE LINUX" >&2; exit 2; }
	grep -vxF -f <(upstream "$3") < <(progs < "$2/$mk") | tr '\n' ' ' || true
	;;
*)
	echo "usage: perf-events-tests.sh --upstream LINUX | --new TREE LINUX" >&2
	exit 2
	;;
esac
