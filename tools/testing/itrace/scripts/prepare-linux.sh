#!/bin/bash
# Install the pinned linux-source-6.12 package (or fall back to the newest
# 6.12 with a loud warning), unpack it into build/linux and record the
# pristine base as a git commit so that edits can be diffed by `make refresh`.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${BUILD:?}" "${LINUX_PKG_VERSION:?}"
dest=$BUILD/linux
stamp=$BUILD/stamps/linux-base
mkdir -p "$BUILD/stamps"

want=$LINUX_PKG_VERSION
have=$(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null || true)
if [ "$have" != "$want" ]; then
	if ! apt-get install -y -q "linux-source-6.12=$want" >/dev/null 2>&1; then
		echo "######################################################################" >&2
		echo "WARNING: pinned linux-source-6.12=$want is not available;" >&2
		echo "WARNING: falling back to the newest 6.12; patches are applied with fuzz." >&2
		echo "######################################################################" >&2
		apt-get update -q >/dev/null 2>&1 || true
		apt-get install -y -q linux-source-6.12 >/dev/null
		echo fuzz > "$BUILD/stamps/linux-fuzz"
	fi
	have=$(dpkg-query -W -f='${Version}' linux-source-6.12)
fi
[ "$have" = "$want" ] && rm -f "$BUILD/stamps/linux-fuzz"

# Debian's tarball ignores everything at the top level ("/*" in .gitignore),
# which would hide files added to the tree from `git status` and so from
# `make refresh-check`.  Drop that block from the working copy only.
unignore() {
	if grep -qx '/\*' "$dest/.gitignore"; then
		git -C "$dest" update-index --skip-worktree .gitignore
		sed -i '/^# Debian packaging: ignore everything/,$d' "$dest/.gitignore"
		sed -i '/^\/\*$/d; /^!\/debian\/$/d' "$dest/.gitignore"
	fi
}

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$have" ] && [ -d "$dest/.git" ]; then
	unignore
	exit 0
fi
echo "  PREP    linux-source-6.12 $have -> $dest"
rm -rf "$dest" "$BUILD/linux-obj" "$BUILD/stamps/linux-overlay"
mkdir -p "$dest"
tar -xJf /usr/src/linux-source-6.12.tar.xz -C "$dest" --strip-components=1
"$here/git-base.sh" "$dest" "linux-source-6.12 $have"
unignore
echo "$have" > "$stamp"
