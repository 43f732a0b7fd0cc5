#!/bin/bash
# Record an unpacked base tree as one git commit, so `git diff` shows exactly
# the edits made on top of it.  The repository of the base is private to build/.
set -euo pipefail
tree=$1 msg=$2
cd "$tree"
git init -q .
git config user.email build@itrace.invalid
git config user.name "itrace build"
git config core.autocrlf false
git config gc.auto 0
# Overlay-added files appear as symlinks or copies; keep them out of status.
: > .git/info/exclude
git add -A -f . >/dev/null
git commit -q -m "base: $msg"
