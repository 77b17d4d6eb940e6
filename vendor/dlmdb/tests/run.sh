#!/bin/sh
# Run every test binary in $1 (optionally only those whose name contains $2),
# echo their output and finish with an overall "N passed, M failed" line.
# A binary that dies before printing its own summary counts as one failure.
dir=$1
filter=$2
total_pass=0
total_fail=0
total_xfail=0
bad=""
for bin in "$dir"/test_*; do
	[ -x "$bin" ] || continue
	name=$(basename "$bin")
	case "$name" in *"$filter"*) ;; *) continue ;; esac
	echo "== $name"
	out=$("$bin" 2>&1)
	status=$?
	printf '%s\n' "$out"
	summary=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -n 1)
	if [ -n "$summary" ]; then
		p=${summary%% passed*}
		f=${summary#*, }; f=${f%% failed}
	else
		p=0; f=1
		echo "   $name exited with status $status without a summary"
	fi
	if [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
		echo "   $name exited with status $status"
	fi
	x=$(printf '%s\n' "$out" | sed -n 's/^\([0-9][0-9]*\) expected failures* (xfail)$/\1/p' | tail -n 1)
	total_xfail=$((total_xfail + ${x:-0}))
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
	[ "$f" -ne 0 ] && bad="$bad $name"
done
[ -n "$bad" ] && echo "failing programs:$bad"
[ "$total_xfail" -ne 0 ] && echo "($total_xfail expected failures of features not done yet: see xfail lines)"
echo "TOTAL: $total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
