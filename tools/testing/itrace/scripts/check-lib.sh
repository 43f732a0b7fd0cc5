# Sourced by check.sh and check-host.sh: the result counters and the TAP
# folding of `make check`.  Each result is one line, "ok      NAME",
# "skip    NAME # REASON" or "FAIL    NAME # REASON"; fold_results counts
# such lines that another script printed.
pass=0 fail=0 skip=0

result() {	# result ok|fail|skip NAME [REASON]
	case $1 in
	ok)   pass=$((pass + 1)); echo "ok      $2" ;;
	skip) skip=$((skip + 1)); echo "skip    $2${3:+ # $3}" ;;
	*)    fail=$((fail + 1)); echo "FAIL    $2${3:+ # $3}" ;;
	esac
}

# tap FILE PREFIX: fold a TAP/KTAP stream's top-level results into the
# totals; a plan with missing results counts each missing one as failed.
tap() {
	local file=$1 prefix=$2 line name plan=0 seen=0
	while IFS= read -r line; do
		case $line in
		1..*) plan=$((plan + ${line#1..})) ;;
		"ok "[0-9]*|"not ok "[0-9]*)
			seen=$((seen + 1))
			name=$(echo "$line" | sed -E 's/^(not )?ok [0-9]+ *-? *//')
			[ -n "$prefix" ] && name="$prefix/$name"
			if echo "$line" | grep -qiE '# *skip'; then
				result skip "${name%%#*}" "${name#*#}"
			elif [ "${line#not}" != "$line" ]; then
				result fail "$name"
			else
				result ok "$name"
			fi ;;
		esac
	done < "$file"
	if [ "$plan" -gt "$seen" ]; then
		for _ in $(seq $((plan - seen))); do
			result fail "$prefix(missing result: test crashed or hung; see $file)"
		done
	fi
	if [ "$plan" -eq 0 ] && [ "$seen" -eq 0 ]; then
		result fail "$file (no TAP output; see $file)"
	fi
}

# fold_results FILE: count and print the result lines of FILE (the output
# of check-host.sh); its other lines are printed as they are.  A FILE
# without the end line "check-host: end" (the script died or was killed)
# is one more failure.
fold_results() {
	local line ended=
	while IFS= read -r line; do
		case $line in
		"ok      "*)   pass=$((pass + 1)); echo "$line" ;;
		"skip    "*)   skip=$((skip + 1)); echo "$line" ;;
		"FAIL    "*)   fail=$((fail + 1)); echo "$line" ;;
		"check-host: end"*) ended=1; echo "   ${line#check-host: end, }" ;;
		*) echo "$line" ;;
		esac
	done < "$1"
	[ -n "$ended" ] || result fail "host checks" "ended early; see $1"
}

# stage TITLE: a stage's heading, with the seconds since the script began
stage() {
	echo "== $* [at $SECONDS s]"
}
