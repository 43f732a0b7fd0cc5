#!/bin/bash
# Generate the test kernel's .config from allnoconfig plus the fragment and
# fail loudly if an option the tests rely on did not survive.
set -euo pipefail
: "${BUILD:?}"
src=$BUILD/linux obj=$(realpath -m "$1") frag=$2 req=$3
mkdir -p "$obj"
make -s -C "$src" O="$obj" allnoconfig >/dev/null
"$src/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "$frag" >/dev/null
make -s -C "$src" O="$obj" olddefconfig >/dev/null
missing=0
while read -r line; do
	case "$line" in
	'# CONFIG_'*' is not set')
		opt=${line#\# }; opt=${opt%% *}
		if grep -q "^$opt=" "$obj/.config"; then
			echo "ERROR: kernel .config has $opt set; the tests need it off" >&2
			missing=1
		fi
		continue ;;
	''|'#'*) continue ;;
	esac
	if ! grep -qxF -- "$line" "$obj/.config"; then
		echo "ERROR: kernel .config lacks required '$line'" >&2
		missing=1
	fi
done < "$req"
if [ "$missing" -ne 0 ]; then
	echo "ERROR: the test kernel config is missing options the tests rely on" >&2
	mv "$obj/.config" "$obj/.config.rejected"
	exit 1
fi
