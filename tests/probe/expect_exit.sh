#!/usr/bin/env bash
# expect_exit.sh CODE REGEX COMMAND...: runs COMMAND, passes when it exits with CODE and its
# standard error matches REGEX (grep -E; "" for any).
set -u
code=$1 regex=$2
shift 2
err=$(mktemp)
"$@" >/dev/null 2>"$err"
rc=$?
cat "$err" >&2
if [ "$rc" -ne "$code" ]; then
  echo "expected exit $code, got $rc" >&2; rm -f "$err"; exit 1
fi
if [ -n "$regex" ] && ! grep -Eq -e "$regex" "$err"; then  # -e: a regex may start with "-"
  echo "standard error does not match: $regex" >&2; rm -f "$err"; exit 1
fi
rm -f "$err"
