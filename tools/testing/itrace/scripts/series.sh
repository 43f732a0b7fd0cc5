#!/bin/bash
# `make series`: export the overlay as a git format-patch series against the
# base.  Not written yet; it fails rather than pretend.
echo "make series: not implemented yet" >&2
exit 1
