#!/bin/bash
# `make series`: the series for LKML, as git format-patch files, against
# the pristine base (tools/testing/itrace/series/README):
#
#   1. The kernel series: the patch stack kept in series/kernel/ (one
#      git format-patch file per patch, applied in name order with git am).
#      Its result must equal the overlay's kernel files byte for byte: a
#      file the two disagree on, or one only one of them changes, is
#      "drift" and fails this script (and make check).
#   2. The test bed, "not for merging", on top of it: one patch per
#      message file in series/testbed/ (Subject:, Paths: prefixes of
#      overlay files, Style:, then the body), each overlay file of
#      tools/itrace/ and tools/testing/itrace/ in exactly one of them.
#
# Every overlay file is in one of the two.  Output: build/series/kernel/
# and build/series/testbed/ (cover letter and patches), the tree in
# build/series/tree.
#
#   series.sh [--checkpatch]   export, check drift; with --checkpatch, run
#                              scripts/checkpatch.pl --strict on the patches
#   series.sh --check          the drift check alone, nothing exported
#   series.sh --edit           build/series/edit: a worktree of the base with
#                              the stack as commits, and a last commit
#                              "drift: ..." with what the overlay has that the
#                              stack has not, to fold into the right patches
#                              (git rebase -i)
#   series.sh --save           write build/series/edit's commits back into
#                              series/kernel/; refused while its tree differs
#                              from the overlay's
#
# SERIES_STACK=DIR takes the stack from DIR (the tests' mutated copies).
set -euo pipefail
: "${BUILD:?}"
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../../.." && pwd)
. "$here/series-lib.sh"
msgs=$top/tools/testing/itrace/series
stack=${SERIES_STACK:-$msgs/kernel}
out=$BUILD/series
mode=export checkpatch=
case ${1:-} in
--checkpatch) checkpatch=1 ;;
--check) mode=check ;;
--edit) mode=edit ;;
--save) mode=save ;;
"") ;;
*) echo "usage: series.sh [--checkpatch | --check | --edit | --save]" >&2; exit 2 ;;
esac

linux=$BUILD/linux
[ -d "$linux/.git" ] || { echo "series: run make first (no $linux)" >&2; exit 1; }
base=$(git -C "$linux" rev-list --max-parents=0 HEAD)
name=$(git -C "$top" config user.name || echo itrace)
email=$(git -C "$top" config user.email || echo itrace@invalid)
gitc=(-c user.name="$name" -c user.email="$email")
mkdir -p "$out"

# The overlay's files, as the repository has them (committed or not).
mapfile -t files < <(cd "$top" && git ls-files --cached --others --exclude-standard |
	grep -vE '^(README\.md|Makefile|\.gitignore|\.ci/)' | sort -u |
	while IFS= read -r f; do [ -e "$f" ] && echo "$f"; done)
# Test-bed files: under a Paths: prefix of a series/testbed/ message.
declare -A owner=()
for m in "$msgs"/testbed/[0-9][0-9][0-9][0-9]-*; do
	read -r -a paths <<< "$(sed -n 's/^Paths: //p' "$m" | head -1)"
	for f in "${files[@]}"; do
		for p in "${paths[@]}"; do
			[ "${f#"$p"}" != "$f" ] || continue
			if [ -n "${owner[$f]:-}" ]; then
				echo "series: $f is in both ${owner[$f]} and $(basename "$m")" >&2
				exit 1
			fi
			owner[$f]=$(basename "$m")
		done
	done
done
# The kernel's: tree path -> overlay file (P.patch: a diff against P)
declare -A kfile=()
for f in "${files[@]}"; do
	[ -n "${owner[$f]:-}" ] && continue
	case $f in
	*.patch) kfile[${f%.patch}]=$f ;;
	*) kfile[$f]=$f ;;
	esac
done
mapfile -t patches < <(series_patches "$stack")
[ "${#patches[@]}" -gt 0 ] || { echo "series: no patch in $stack" >&2; exit 1; }

# A worktree of the base, sparse (the files either side touches and what
# checkpatch.pl reads) unless $2 is "full"; commits carry the whole tree.
new_tree() {	# new_tree DIR [full]
	git -C "$linux" worktree remove --force "$1" >/dev/null 2>&1 || rm -rf "$1"
	git -C "$linux" worktree prune
	git -C "$linux" worktree add -q --no-checkout --detach "$1" "$base"
	if [ "${2:-}" != full ]; then
		{
			printf '/scripts/\n/LICENSES/\n/.gitignore\n'
			for f in COPYING CREDITS Kbuild MAINTAINERS Makefile README; do echo "/$f"; done
			for d in Documentation arch include drivers fs init ipc kernel lib; do
				echo "/$d/Makefile"
				echo "/$d/Kconfig*"
			done
			echo /Documentation/dev-tools/checkpatch.rst
			for p in "${!kfile[@]}"; do echo "/$p"; done
			for f in "${files[@]}"; do
				[ -n "${owner[$f]:-}" ] && echo "/$f"
			done
			sed -n 's,^diff --git a/\([^ ]*\) b/.*,/\1,p' "${patches[@]}"
		} | sort -u > "$out/sparse"
		git -C "$1" sparse-checkout set --no-cone --stdin < "$out/sparse"
	fi
	git -C "$1" checkout -q --detach "$base"
}

# The stack as commits on the base in $1.
apply_stack() {
	local p
	for p in "${patches[@]}"; do
		if ! git -C "$1" "${gitc[@]}" am -q --committer-date-is-author-date "$p" \
			> "$out/am.log" 2>&1; then
			echo "series: $(basename "$p") does not apply (git am):" >&2
			sed 's/^/  /' "$out/am.log" | head -20 >&2
			git -C "$1" am --abort >/dev/null 2>&1 || true
			exit 1
		fi
	done
}

# What the overlay makes of tree path $1, into file $2.
overlay_file() {
	local f=${kfile[$1]}
	if [ "$f" = "$1" ]; then
		cp "$top/$f" "$2"
	else
		git -C "$linux" show "$base:$1" > "$2.orig"
		patch -s -F0 -o "$2" "$2.orig" < "$top/$f" > /dev/null
		rm -f "$2.orig"
	fi
}

# Drift: paths where commit $2 of worktree $1 and the overlay disagree.
# Prints one "series: drift: ..." line each; status 1 if any.
drift() {
	local t=$1 rev=$2 p n=0 tmp=$out/drift.tmp
	declare -A seen=()
	while IFS= read -r p; do
		seen[$p]=1
		if [ -z "${kfile[$p]:-}" ]; then
			echo "series: drift: the stack changes $p, the overlay does not"
			n=$((n + 1))
		fi
	done < <(git -C "$t" diff --name-only "$base" "$rev")
	for p in "${!kfile[@]}"; do
		if [ -z "${seen[$p]:-}" ]; then
			echo "series: drift: the overlay changes $p (${kfile[$p]}), the stack does not"
			n=$((n + 1))
			continue
		fi
		overlay_file "$p" "$tmp"
		if ! git -C "$t" show "$rev:$p" | cmp -s - "$tmp"; then
			echo "series: drift: $p differs between the stack and the overlay (${kfile[$p]})"
			n=$((n + 1))
		fi
	done
	rm -f "$tmp"
	[ "$n" -eq 0 ]
}

if [ "$mode" = edit ]; then
	ed=$out/edit
	new_tree "$ed" full
	apply_stack "$ed"
	# Commits made there (splits, fixups) carry the repository's author,
	# not build/linux's "itrace build": checkpatch wants its Signed-off-by
	git -C "$ed" config extensions.worktreeConfig true
	git -C "$ed" config --worktree user.name "$name"
	git -C "$ed" config --worktree user.email "$email"
	if drift "$ed" HEAD > "$out/drift.txt"; then
		echo "  SERIES  $ed: ${#patches[@]} patches, no drift"
	else
		for p in "${!kfile[@]}"; do
			mkdir -p "$ed/$(dirname "$p")"
			overlay_file "$p" "$ed/$p"
		done
		git -C "$ed" diff --name-only "$base" HEAD | while IFS= read -r p; do
			[ -n "${kfile[$p]:-}" ] || git -C "$ed" checkout -q "$base" -- "$p"
		done
		git -C "$ed" add -A
		git -C "$ed" "${gitc[@]}" commit -q -m "drift: what the overlay has that the stack has not" \
			-m "Fold these changes into the patches they belong to (git rebase -i), then make series-save."
		echo "  SERIES  $ed: ${#patches[@]} patches and a drift commit ($(wc -l < "$out/drift.txt") paths)"
	fi
	exit 0
fi

if [ "$mode" = save ]; then
	ed=$out/edit
	[ -d "$ed/.git" ] || [ -f "$ed/.git" ] || { echo "series: no $ed (make series-edit)" >&2; exit 1; }
	if ! git -C "$ed" diff --quiet HEAD; then
		echo "series: $ed has uncommitted changes" >&2
		exit 1
	fi
	if git -C "$ed" log --format=%s "$base..HEAD" | grep '^drift: ' > /dev/null; then
		echo "series: $ed still has a drift commit: fold it into the patches first" >&2
		exit 1
	fi
	if ! drift "$ed" HEAD > "$out/drift.txt"; then
		sed 's/^series: drift:/series: not saved: drift:/' "$out/drift.txt" >&2
		exit 1
	fi
	rm -rf "$out/save"
	git -C "$ed" format-patch -q --zero-commit --no-signature -o "$out/save" "$base..HEAD"
	rm -f "$stack"/[0-9][0-9][0-9][0-9]-*.patch
	cp "$out/save"/*.patch "$stack/"
	echo "  SERIES  $(ls "$out/save" | wc -l) patches saved into $stack"
	exit 0
fi

tree=$out/tree
new_tree "$tree"
apply_stack "$tree"
kernel_head=$(git -C "$tree" rev-parse HEAD)
if ! drift "$tree" HEAD > "$out/drift.txt"; then
	cat "$out/drift.txt" >&2
	echo "series: the stack in $stack and the overlay differ (make series-edit folds the overlay's changes in)" >&2
	exit 1
fi
if [ "$mode" = check ]; then
	echo "  SERIES  ${#patches[@]} patches of $stack: the overlay's kernel files byte for byte"
	exit 0
fi

# The test bed on top, a commit per message file.
for m in "$msgs"/testbed/[0-9][0-9][0-9][0-9]-*; do
	subject=$(sed -n 's/^Subject: //p' "$m" | head -1)
	n=0
	for f in "${files[@]}"; do
		[ "${owner[$f]:-}" = "$(basename "$m")" ] || continue
		n=$((n + 1))
		mkdir -p "$tree/$(dirname "$f")"
		cp "$top/$f" "$tree/$f"
	done
	[ "$n" -gt 0 ] || { echo "series: $(basename "$m") owns no file" >&2; exit 1; }
	git -C "$tree" add -A -f --sparse
	{ echo "$subject"; echo; sed '1,/^$/d' "$m"; } |
		git -C "$tree" "${gitc[@]}" commit -q -s -F -
done

# Cover letter $2 (Subject:, blank line, blurb) into format-patch's $1.
cover() {
	local c=$1/0000-cover-letter.patch subject
	subject=$(sed -n 's/^Subject: //p' "$2" | head -1)
	sed '1,/^$/d' "$2" > "$out/blurb"
	awk -v subj="$subject" -v blurb="$out/blurb" '
		/\*\*\* SUBJECT HERE \*\*\*/ { sub(/\*\*\* SUBJECT HERE \*\*\*/, subj) }
		/^\*\*\* BLURB HERE \*\*\*$/ { while ((getline l < blurb) > 0) print l; next }
		{ print }' "$c" > "$c.tmp" && mv "$c.tmp" "$c"
}
rm -rf "$out/kernel" "$out/testbed" "$out/patches"
git -C "$tree" format-patch -q --cover-letter --thread -o "$out/kernel" "$base..$kernel_head"
cover "$out/kernel" "$stack/cover-letter"
git -C "$tree" format-patch -q --cover-letter --thread --subject-prefix="PATCH testbed" \
	-o "$out/testbed" "$kernel_head..HEAD"
cover "$out/testbed" "$msgs/testbed/cover-letter"
echo "  SERIES  $(ls "$out/kernel"/*.patch | wc -l) files in $out/kernel, $(ls "$out/testbed"/*.patch | wc -l) in $out/testbed (base $(git -C "$linux" log -1 --format=%s "$base"); no drift)"

if [ -n "$checkpatch" ]; then
	rc=0 n=0
	patches=()
	for p in "$out/kernel"/[0-9][0-9][0-9][0-9]-*.patch "$out/testbed"/[0-9][0-9][0-9][0-9]-*.patch; do
		case $p in */0000-cover-letter.patch) continue ;; esac
		patches+=("$p")
	done
	# checkpatch.pl is one slow process a patch: as many at once as
	# there are CPUs (SERIES_JOBS, if set), the reports then read in
	# the series' order
	for p in "${patches[@]}"; do
		while [ "$(jobs -pr | wc -l)" -ge "${SERIES_JOBS:-$(nproc)}" ]; do
			wait -n
		done
		{ checkpatch_run "$p" "$tree" "$p.checkpatch" && echo 0 || echo $?; } > "$p.rc" &
	done
	wait
	for p in "${patches[@]}"; do
		prc=$(cat "$p.rc")
		rm -f "$p.rc"
		if [ "$prc" = 2 ]; then
			echo "# $(basename "$p"): not checked with checkpatch (test bed: QEMU-style C and shell)"
			continue
		fi
		n=$((n + 1))
		if [ "$prc" = 0 ]; then
			echo "ok $n - checkpatch --strict $(basename "$(dirname "$p")")/$(basename "$p")"
		else
			echo "not ok $n - checkpatch --strict $(basename "$p") # $(grep -cE '^(ERROR|WARNING|CHECK)' "$p.checkpatch") reports, see $p.checkpatch"
			rc=1
		fi
	done
	echo "1..$n"
	exit $rc
fi
