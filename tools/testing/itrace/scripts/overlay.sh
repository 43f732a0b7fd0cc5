#!/bin/bash
# Apply an overlay (DESIGN.md section 3) to a base tree prepared by
# prepare-*.sh:
#   - a file P not named *.patch is a new file: symlinked into the tree at P;
#   - P.patch is a unified diff against base file P, applied with patch -p1.
# Only what changed since the last run is touched, so builds stay incremental.
#
# usage: overlay.sh SRC TREE NAME [EXCLUDE-PREFIX...]
set -euo pipefail
mkdir -p "$1"
src=$(cd "$1" && pwd) tree=$2 name=$3
shift 3
excl=("$@")
: "${BUILD:?}"
state=$BUILD/stamps/$name-overlay
mkdir -p "$state"
fuzz=(-F0)
[ -f "$BUILD/stamps/$name-fuzz" ] && fuzz=(-F3)

list_overlay() {
	(cd "$src" && find . \( -name .git -o -name build -o -name .ci \) -prune -o \
		\( -type f -o -type l \) -print | sed 's|^\./||' | sort) |
	while read -r p; do
		case "$p" in
		README.md|Makefile|.gitignore|.gitattributes) continue ;;
		esac
		skip=
		for e in "${excl[@]}"; do
			case "$p" in "$e"*) skip=1 ;; esac
		done
		[ -z "$skip" ] && echo "$p"
	done
}

mapfile -t files < <(list_overlay)
new_list=$state/new.list
: > "$new_list.tmp"
rc=0
for p in "${files[@]}"; do
	case "$p" in
	*.patch)
		t=${p%.patch}
		sum=$(sha1sum < "$src/$p" | cut -d' ' -f1)
		key=$state/patch/$t.sha1
		if [ -f "$key" ] && [ "$(cat "$key")" = "$sum" ]; then
			continue
		fi
		echo "  PATCH   $name: $t"
		git -C "$tree" checkout -q -- "$t"
		if ! patch -s -p1 -N "${fuzz[@]}" --no-backup-if-mismatch -d "$tree" < "$src/$p"; then
			echo "ERROR: $name: $p does not apply to the base; fix or refresh it" >&2
			rc=1
			continue
		fi
		mkdir -p "$(dirname "$key")"
		echo "$sum" > "$key"
		;;
	*)
		echo "$p" >> "$new_list.tmp"
		if [ "$(basename "$p")" = .gitignore ]; then
			# git does not follow a symlinked .gitignore: copy it.
			[ ! -L "$tree/$p" ] && cmp -s "$src/$p" "$tree/$p" && continue
			rm -f "$tree/$p"
			mkdir -p "$tree/$(dirname "$p")"
			cp "$src/$p" "$tree/$p"
			continue
		fi
		if [ -L "$tree/$p" ] && [ "$(readlink "$tree/$p")" = "$src/$p" ]; then
			continue
		fi
		if git -C "$tree" ls-files --error-unmatch -- "$p" >/dev/null 2>&1; then
			echo "ERROR: $name: new file $p shadows a base file; make it $p.patch" >&2
			rc=1
			continue
		fi
		mkdir -p "$tree/$(dirname "$p")"
		ln -sfn "$src/$p" "$tree/$p"
		;;
	esac
done

# Patches removed from the overlay: restore the base file.
if [ -d "$state/patch" ]; then
	(cd "$state/patch" && find . -name '*.sha1' | sed 's|^\./||; s|\.sha1$||') |
	while read -r t; do
		if [ ! -f "$src/$t.patch" ]; then
			echo "  UNPATCH $name: $t"
			git -C "$tree" checkout -q -- "$t"
			rm -f "$state/patch/$t.sha1"
		fi
	done
fi
# New files removed from the overlay: drop their links.
if [ -f "$new_list" ]; then
	comm -23 <(sort "$new_list") <(sort "$new_list.tmp") | while read -r p; do
		if [ -L "$tree/$p" ] || [ "$(basename "$p")" = .gitignore ]; then
			rm -f "$tree/$p"
		fi
	done
fi
mv "$new_list.tmp" "$new_list"
exit $rc
