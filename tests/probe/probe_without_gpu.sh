#!/usr/bin/env bash
# probe_without_gpu.sh LINKWISE REGEX: on a machine without an NVIDIA GPU, `linkwise probe` writes
# exactly one line (matching REGEX) to standard error, nothing to standard output, and exits 2.
# Skipped (exit 77) where a GPU is present: there it would measure.
set -u
linkwise=$1 regex=$2
if ls /dev/nvidia[0-9]* >/dev/null 2>&1; then
  echo "an NVIDIA GPU is present; this test is for machines without one" >&2
  exit 77
fi
out=$(mktemp) err=$(mktemp)
"$linkwise" probe --quick >"$out" 2>"$err"
rc=$?
cat "$err" >&2
lines=$(wc -l <"$err")
status=0
[ "$rc" -eq 2 ] || { echo "expected exit 2, got $rc" >&2; status=1; }
[ "$lines" -eq 1 ] || { echo "expected one line on standard error, got $lines" >&2; status=1; }
[ ! -s "$out" ] || { echo "expected nothing on standard output" >&2; status=1; }
grep -Eq "$regex" "$err" || { echo "standard error does not match: $regex" >&2; status=1; }
rm -f "$out" "$err"
exit $status
