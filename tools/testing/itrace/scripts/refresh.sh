#!/bin/bash
# Bring edits of base files made in a build tree back into the repository
# as P.patch files, or (with --check) fail if the tree holds edits that the
# repository lacks.
#
# usage: refresh.sh [--check] SRC TREE NAME
set -euo pipefail
check=
[ "${1:-}" = --check ] && { check=1; shift; }
src=$(cd "$1" && pwd) tree=$2 name=$3
: "${BUILD:?}"
state=$BUILD/stamps/$name-overlay
[ -d "$tree/.git" ] || exit 0
rc=0
tmp=$(mktemp)
trap 'rm -f "$tmp" "$tmp".*' EXIT

# Does the base file T with the repository's T.patch applied equal the tree's T?
patched_equals() {
	git -C "$tree" show "HEAD:$1" > "$tmp.base" &&
	patch -s -F0 -o "$tmp.out" "$tmp.base" < "$src/$1.patch" >/dev/null 2>&1 &&
	cmp -s "$tmp.out" "$tree/$1"
	local rc=$?
	rm -f "$tmp.base" "$tmp.out" "$tmp.out.orig" "$tmp.out.rej"
	return $rc
}

# Edited base files.
mapfile -t changed < <(git -C "$tree" diff --name-only)
for t in "${changed[@]}"; do
	if [ -f "$src/$t.patch" ] && patched_equals "$t"; then
		continue
	fi
	git -C "$tree" diff --no-color --no-ext-diff -- "$t" > "$tmp"
	if [ -n "$check" ]; then
		echo "$name: $t: edited in $tree, not in $src/$t.patch"
		rc=1
		continue
	fi
	echo "  REFRESH $name: $t.patch"
	mkdir -p "$src/$(dirname "$t")"
	cp "$tmp" "$src/$t.patch"
	mkdir -p "$(dirname "$state/patch/$t.sha1")"
	sha1sum < "$src/$t.patch" | cut -d' ' -f1 > "$state/patch/$t.sha1"
done
# Patches whose edits were reverted in the tree.
(cd "$src" && find . \( -name .git -o -name build \) -prune -o -name '*.patch' -print 2>/dev/null |
	sed 's|^\./||') | while read -r p; do
	t=${p%.patch}
	git -C "$tree" ls-files --error-unmatch -- "$t" >/dev/null 2>&1 || continue
	if git -C "$tree" diff --quiet -- "$t"; then
		if [ -n "$check" ]; then
			echo "$name: $t: unmodified in $tree but $p exists"
			echo 1 > "$tmp.fail"
		else
			echo "  DROP    $name: $p (no edits left)"
			rm -f "$src/$p" "$state/patch/$t.sha1"
		fi
	fi
done
[ -f "$tmp.fail" ] && { rm -f "$tmp.fail"; rc=1; }
[ -n "$check" ] && [ "$rc" -ne 0 ] && exit 1
# New files created in the tree (not links into the repository).
git -C "$tree" ls-files --others --exclude-standard | while read -r p; do
	[ -L "$tree/$p" ] && continue
	[ -f "$state/new.list" ] && grep -qxF -- "$p" "$state/new.list" && continue
	if [ -n "$check" ]; then
		echo "$name: $p: new file in $tree, not in the repository"
		exit 1
	fi
	echo "  ADOPT   $name: $p (moved into the repository, linked back)"
	mkdir -p "$src/$(dirname "$p")"
	mv "$tree/$p" "$src/$p"
	ln -s "$src/$p" "$tree/$p"
done
exit $rc
