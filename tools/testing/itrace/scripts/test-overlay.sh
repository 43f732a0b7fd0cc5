#!/bin/bash
# Host test of the overlay convention (DESIGN.md section 3): apply, re-apply
# incrementally, refresh, refresh-check and removal, on a scratch base tree.
# TAP output.
set -u
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export BUILD=$tmp/build
mkdir -p "$BUILD/stamps"
n=0 failed=0
ok() {	# ok CONDITION-EXIT-STATUS NAME
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; failed=1; fi
}

base=$tmp/base ov=$tmp/overlay
mkdir -p "$base/dir" "$ov/dir" "$ov/newdir"
printf 'one\ntwo\nthree\n' > "$base/dir/file.c"
printf 'keep\n' > "$base/other.c"
"$here/git-base.sh" "$base" "scratch" >/dev/null
printf 'new\n' > "$ov/newdir/added.c"
(cd "$base" && sed 's/two/TWO/' dir/file.c > "$tmp/f" && diff -u --label a/dir/file.c --label b/dir/file.c dir/file.c "$tmp/f") > "$ov/dir/file.c.patch"

"$here/overlay.sh" "$ov" "$base" t >/dev/null 2>&1
ok $? "overlay applies"
grep -qx TWO "$base/dir/file.c"; ok $? "patch P.patch changes base file P"
[ -L "$base/newdir/added.c" ] && grep -qx new "$base/newdir/added.c"; ok $? "new file P is linked at P"

touch -d '2000-01-01' "$base/dir/file.c"
"$here/overlay.sh" "$ov" "$base" t >/dev/null 2>&1
[ "$(stat -c %Y "$base/dir/file.c")" -lt 1000000000 ]; ok $? "re-apply leaves unchanged files alone (incremental)"

"$here/refresh.sh" --check "$ov" "$base" t >/dev/null 2>&1
ok $? "refresh-check passes on a clean tree"
printf 'four\n' >> "$base/dir/file.c"
"$here/refresh.sh" --check "$ov" "$base" t >/dev/null 2>&1
[ $? -ne 0 ]; ok $? "refresh-check fails on an edit not in the repository"
"$here/refresh.sh" "$ov" "$base" t >/dev/null 2>&1
grep -q '^+four' "$ov/dir/file.c.patch"; ok $? "refresh writes the edit into P.patch"
"$here/refresh.sh" --check "$ov" "$base" t >/dev/null 2>&1
ok $? "refresh-check passes after refresh"
"$here/overlay.sh" "$ov" "$base" t >/dev/null 2>&1
grep -qx four "$base/dir/file.c"; ok $? "a refreshed patch is not re-applied"

printf 'edited\n' >> "$base/other.c"
"$here/refresh.sh" "$ov" "$base" t >/dev/null 2>&1
[ -f "$ov/other.c.patch" ]; ok $? "refresh creates a patch for a newly edited base file"
printf 'fresh\n' > "$base/dir/created.c"
"$here/refresh.sh" --check "$ov" "$base" t >/dev/null 2>&1
[ $? -ne 0 ]; ok $? "refresh-check fails on a new file only in the build tree"
"$here/refresh.sh" "$ov" "$base" t >/dev/null 2>&1
[ -f "$ov/dir/created.c" ] && [ -L "$base/dir/created.c" ]; ok $? "refresh adopts a new file into the repository"

rm "$ov/other.c.patch" "$ov/newdir/added.c"
"$here/overlay.sh" "$ov" "$base" t >/dev/null 2>&1
[ "$(cat "$base/other.c")" = keep ] && [ ! -e "$base/newdir/added.c" ]
ok $? "removing P.patch restores the base file, removing P drops it"

printf 'garbage\n' > "$ov/dir/file.c.patch.tmp"; mv "$ov/dir/file.c.patch.tmp" "$ov/dir/file.c.patch"
"$here/overlay.sh" "$ov" "$base" t >/dev/null 2>&1
[ $? -ne 0 ]; ok $? "a patch that does not apply fails the build"

echo "1..$n"
exit $failed
