#!/bin/bash
# Fetch Debian bookworm's pinned QEMU 7.2 source with `apt-get source`
# through a private apt configuration under build/ (the machine's own apt
# sources are never touched) and record it as a git base in build/qemu.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${BUILD:?}" "${QEMU_SRC_VERSION:?}"
dest=$BUILD/qemu
stamp=$BUILD/stamps/qemu-base
mkdir -p "$BUILD/stamps"
ver=$QEMU_SRC_VERSION
if [ -f "$stamp" ] && [ -d "$dest/.git" ]; then
	exit 0
fi
apt=$BUILD/apt
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/src" \
	"$apt/etc/preferences.d" "$apt/etc/apt.conf.d" "$apt/etc/trusted.gpg.d"
cat > "$apt/sources.list" <<SRC
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm-updates main
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian-security bookworm-security main
SRC
opts=(-o "Dir::Etc::SourceList=$apt/sources.list" -o "Dir::Etc::SourceParts=-"
      -o "Dir::Etc::Parts=$apt/etc/apt.conf.d" -o "Dir::Etc::Preferences=$apt/etc/preferences"
      -o "Dir::Etc::PreferencesParts=$apt/etc/preferences.d"
      -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache"
      -o "Dir::State::status=/var/lib/dpkg/status" -o "APT::Sandbox::User=root")
echo "  FETCH   qemu $ver (apt-get source, private config in $apt)"
apt-get "${opts[@]}" update -q >/dev/null
cd "$apt/src"
rm -rf ./*
if ! apt-get "${opts[@]}" source -q --download-only "qemu=$ver" >/dev/null 2>&1; then
	echo "######################################################################" >&2
	echo "WARNING: pinned qemu=$ver source is not available;" >&2
	echo "WARNING: falling back to the newest bookworm qemu; patches get fuzz." >&2
	echo "######################################################################" >&2
	apt-get "${opts[@]}" source -q --download-only qemu >/dev/null
fi
dsc=$(ls ./*.dsc | head -1)
dpkg-source --no-check -x "$dsc" unpacked >/dev/null
rm -rf "$dest" "$BUILD/qemu-obj" "$BUILD/stamps/qemu-overlay"
mv unpacked "$dest"
# Debian's packaging lives in debian/; the base for the overlay is the
# upstream source with Debian's patches applied (dpkg-source -x did that).
"$here/git-base.sh" "$dest" "qemu source $(basename "$dsc" .dsc)"
basename "$dsc" > "$stamp"
