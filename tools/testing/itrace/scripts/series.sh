#!/bin/bash
# `make series`: export the overlay as a git format-patch series against
# the base, one commit per message file in tools/testing/itrace/series/
# (Subject:, Paths: prefixes, Style:, then the body), with a cover letter.  Every
# file of the overlay must belong to exactly one patch.  With --checkpatch,
# run scripts/checkpatch.pl --strict on each exported patch.
#
# Output: build/series/patches/*.patch; the tree in build/series/tree.
set -euo pipefail
: "${BUILD:?}"
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../../.." && pwd)
msgs=$top/tools/testing/itrace/series
out=$BUILD/series
checkpatch=
[ "${1:-}" = --checkpatch ] && checkpatch=1

linux=$BUILD/linux
[ -d "$linux/.git" ] || { echo "series: run make first (no $linux)" >&2; exit 1; }
base=$(git -C "$linux" rev-list --max-parents=0 HEAD)
tree=$out/tree
git -C "$linux" worktree remove --force "$tree" >/dev/null 2>&1 || rm -rf "$tree"
git -C "$linux" worktree prune
mkdir -p "$out"
# The overlay's files, as the repository has them (committed or not).
mapfile -t files < <(cd "$top" && git ls-files --cached --others --exclude-standard |
	grep -vE '^(README\.md|Makefile|\.gitignore|\.ci/)' | sort)

# A sparse checkout of the base: the files the series touches and what
# checkpatch.pl reads.  Commits still carry the whole tree.
git -C "$linux" worktree add -q --no-checkout --detach "$tree" "$base"
{
	printf '/scripts/\n/LICENSES/\n/.gitignore\n'
	# What checkpatch.pl takes for the top of a kernel tree.
	for f in COPYING CREDITS Kbuild MAINTAINERS Makefile README; do echo "/$f"; done
	for d in Documentation arch include drivers fs init ipc kernel lib; do
		echo "/$d/Makefile"
		echo "/$d/Kconfig*"
	done
	echo /Documentation/dev-tools/checkpatch.rst
	for f in "${files[@]}"; do
		case $f in
		tools/testing/itrace/qemu/*) ;;
		*.patch) echo "/${f%.patch}" ;;
		esac
	done
} > "$out/sparse"
git -C "$tree" sparse-checkout set --no-cone --stdin < "$out/sparse"
git -C "$tree" checkout -q --detach "$base"
declare -A owner=()
name=$(git -C "$top" config user.name || echo itrace)
email=$(git -C "$top" config user.email || echo itrace@invalid)
for m in "$msgs"/0[0-9][0-9][0-9]-*; do
	case $m in *0000-cover-letter) continue ;; esac
	subject=$(sed -n 's/^Subject: //p' "$m" | head -1)
	read -r -a paths <<< "$(sed -n 's/^Paths: //p' "$m" | head -1)"
	n=0
	for f in "${files[@]}"; do
		for p in "${paths[@]}"; do
			[ "${f#"$p"}" != "$f" ] || continue
			if [ -n "${owner[$f]:-}" ]; then
				echo "series: $f is in both ${owner[$f]} and $(basename "$m")" >&2
				exit 1
			fi
			owner[$f]=$(basename "$m")
			n=$((n + 1))
			case $f in
			tools/testing/itrace/qemu/*|*[!.]*.patch.*) new=1 ;;
			*.patch) new= ;;
			*) new=1 ;;
			esac
			if [ -n "$new" ]; then
				mkdir -p "$tree/$(dirname "$f")"
				cp "$top/$f" "$tree/$f"
			else
				patch -s -p1 -F0 -d "$tree" < "$top/$f"
			fi
		done
	done
	[ "$n" -gt 0 ] || { echo "series: $(basename "$m") owns no file" >&2; exit 1; }
	git -C "$tree" add -A -f --sparse
	{ echo "$subject"; echo; sed '1,/^$/d' "$m"; } |
		git -C "$tree" -c user.name="$name" -c user.email="$email" commit -q -s -F -
done
missing=0
for f in "${files[@]}"; do
	if [ -z "${owner[$f]:-}" ]; then
		echo "series: $f belongs to no patch (add its path to a file in $msgs)" >&2
		missing=1
	fi
done
[ "$missing" -eq 0 ] || exit 1

rm -rf "$out/patches"
git -C "$tree" format-patch -q --cover-letter --thread -o "$out/patches" "$base..HEAD"
cover=$(ls "$out/patches"/0000-cover-letter.patch)
subject=$(sed -n 's/^Subject: //p' "$msgs/0000-cover-letter" | head -1)
sed '1,/^$/d' "$msgs/0000-cover-letter" > "$out/blurb"
awk -v subj="$subject" -v blurb="$out/blurb" '
	/\*\*\* SUBJECT HERE \*\*\*/ { sub(/\*\*\* SUBJECT HERE \*\*\*/, subj) }
	/^\*\*\* BLURB HERE \*\*\*$/ { while ((getline l < blurb) > 0) print l; next }
	{ print }' "$cover" > "$cover.tmp" && mv "$cover.tmp" "$cover"
echo "  SERIES  $(ls "$out/patches" | wc -l) files in $out/patches (base $(git -C "$linux" log -1 --format=%s "$base"))"

if [ -n "$checkpatch" ]; then
	rc=0
	# FILE_PATH_CHANGES: the series' MAINTAINERS entry (patch 1) covers
	# the files later patches add.
	i=0 n=0
	for m in "$msgs"/0[0-9][0-9][0-9]-*; do
		case $m in *0000-cover-letter) continue ;; esac
		i=$((i + 1))
		p=$(ls "$out/patches"/"$(printf %04d $i)"-*.patch)
		style=$(sed -n 's/^Style: //p' "$m" | head -1)
		if [ "$style" != kernel ]; then
			echo "# $(basename "$p"): not checked with checkpatch ($style)"
			continue
		fi
		# CAMELCASE, for the tools and selftests patches only: they use
		# elfutils, libipt and <elf.h>, whose types (Dwfl, GElf_Ehdr,
		# Elf64_Nhdr...) they cannot rename.  PREFER_DEFINED_ATTRIBUTE_MACRO
		# too: user space has no noinline or __packed of the kernel's.
		ignore=FILE_PATH_CHANGES
		case $(basename "$m") in
		*-tools-itrace|*-selftests)
			ignore=$ignore,CAMELCASE,PREFER_DEFINED_ATTRIBUTE_MACRO ;;
		esac
		if PATH=/usr/bin:$PATH "$tree/scripts/checkpatch.pl" --strict --quiet --no-summary \
			--ignore "$ignore" --root="$tree" "$p" > "$p.checkpatch" 2>&1; then
			n=$((n + 1))
			echo "ok $n - checkpatch --strict $(basename "$p")"
		else
			n=$((n + 1))
			echo "not ok $n - checkpatch --strict $(basename "$p") # $(grep -cE '^(ERROR|WARNING|CHECK)' "$p.checkpatch") reports, see $p.checkpatch"
			rc=1
		fi
	done
	echo "1..$n"
	exit $rc
fi
