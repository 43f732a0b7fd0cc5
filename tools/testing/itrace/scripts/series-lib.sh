# Sourced by series.sh and series-check.sh: what both need of the patch
# stack (tools/testing/itrace/series/README).

# series_patches DIR: the stack's patch files in DIR, in order, one per line
# (a format-patch cover letter, 0000-cover-letter.patch, is not a patch).
series_patches() {
	ls "$1"/[0-9][0-9][0-9][0-9]-*.patch 2>/dev/null |
		grep -v '/0000-cover-letter\.patch$' || true
}

# checkpatch_run PATCH ROOT OUT: scripts/checkpatch.pl --strict of the tree
# ROOT on PATCH, its report into OUT; status 0 when clean, 2 for a patch
# checkpatch does not apply to (the test bed's QEMU-style C and shell).
# FILE_PATH_CHANGES: the series' last patch adds the MAINTAINERS entry
# for the files the patches before it add.  UNKNOWN_COMMIT_ID: the base
# is one commit (Debian's linux-source), without mainline's history; the
# Fixes: ids are mainline's.  CAMELCASE, for the tools and selftests only: they use
# elfutils, libipt and <elf.h>, whose types (Dwfl, GElf_Ehdr,
# Elf64_Nhdr...) they cannot rename; PREFER_DEFINED_ATTRIBUTE_MACRO too:
# user space has no noinline or __packed of the kernel's.
checkpatch_run() {
	local ignore=FILE_PATH_CHANGES,UNKNOWN_COMMIT_ID
	case $(sed -n 's/^Subject: //p' "$1" | head -1) in
	*" selftests"*|*" tools/itrace:"*)
		ignore=$ignore,CAMELCASE,PREFER_DEFINED_ATTRIBUTE_MACRO ;;
	*" tools/testing/itrace:"*)
		return 2 ;;
	esac
	PATH=/usr/bin:$PATH "$2/scripts/checkpatch.pl" --strict --quiet --no-summary \
		--ignore "$ignore" --root="$2" "$1" > "$3" 2>&1
}
