#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ with clang into build-fuzz/ (-fsanitize=fuzzer,address,
# undefined over the whole build) and runs each for a bounded time, one after another, with its
# dictionary (fuzz/<target>.dict) and its committed corpus (fuzz/corpus/<target>/, read only: new
# inputs go to a scratch directory). Prints per target: executions, coverage (cov: edges,
# ft: features), corpus size and findings (crash-*, leak-*, timeout-*, oom-* files).
#
#   FUZZ_SECONDS=600 bash scripts/fuzz.sh                  # every target, 10 minutes each
#   FUZZ_SECONDS=60 bash scripts/fuzz.sh workload http_request
#
# Environment: FUZZ_SECONDS (per target, default 600), FUZZ_TIMEOUT (seconds one input may take,
# default 30), FUZZ_ARGS (more libFuzzer flags), JOBS (build parallelism, default 2), BUILD
# (default build-fuzz), FUZZ_SCRATCH (default $BUILD/fuzz-scratch), CXX_FUZZ (default clang++-14).
# Needs clang 14 and its libFuzzer: apt-get install -y clang-14 llvm-14.
# Exit status: 0 when no target found anything, 1 otherwise. A finding is a file under
# $FUZZ_SCRATCH/<target>/findings/; replay it with build-fuzz/bin/fuzz_<target> FILE, then copy it
# into fuzz/corpus/<target>/ as a regression input once fixed.
set -euo pipefail
cd "$(dirname "$0")/.."

FUZZ_SECONDS=${FUZZ_SECONDS:-600}
FUZZ_TIMEOUT=${FUZZ_TIMEOUT:-30}
JOBS=${JOBS:-2}
BUILD=${BUILD:-build-fuzz}
SCRATCH=${FUZZ_SCRATCH:-$BUILD/fuzz-scratch}
CXX_FUZZ=${CXX_FUZZ:-clang++-14}
ALL_TARGETS=(workload probe_report catalog_load skypilot_csv http_request)
if (($#)); then TARGETS=("$@"); else TARGETS=("${ALL_TARGETS[@]}"); fi

if ! command -v "$CXX_FUZZ" >/dev/null; then
  echo "fuzz.sh: $CXX_FUZZ not found; install clang 14: apt-get install -y clang-14 llvm-14" >&2
  exit 2
fi
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$CXX_FUZZ" \
  -DLINKWISE_FUZZ=ON -DLINKWISE_CUDA=OFF -DLINKWISE_BUILD_TESTS=OFF -DLINKWISE_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build "$BUILD" -j "$JOBS" --target "${TARGETS[@]/#/fuzz_}"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
summary=()
status=0
for target in "${TARGETS[@]}"; do
  dir="$SCRATCH/$target"
  mkdir -p "$dir/corpus" "$dir/findings"
  log="$dir/fuzz.log"
  echo "fuzz.sh: $target for ${FUZZ_SECONDS}s (log: $log)" >&2
  started=$(date +%s)
  set +e
  # The first corpus directory receives new inputs; the committed corpus is only read.
  # shellcheck disable=SC2086
  "$BUILD/bin/fuzz_$target" "$dir/corpus" "fuzz/corpus/$target" \
    -dict="fuzz/$target.dict" -max_total_time="$FUZZ_SECONDS" -timeout="$FUZZ_TIMEOUT" \
    -rss_limit_mb=4096 -artifact_prefix="$dir/findings/" -print_final_stats=1 ${FUZZ_ARGS:-} >"$log" 2>&1
  rc=$?
  set -e
  seconds=$(($(date +%s) - started))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9]*[a-zA-Z]*\).*/\1/p' <<<"$last")
  speed=$(sed -n 's/.* exec\/s: \([0-9]*\).*/\1/p' <<<"$last")
  findings=$(find "$dir/findings" -type f | wc -l)
  if ((rc != 0 || findings > 0)); then
    status=1
    grep -m1 -E 'ERROR: |fuzz finding:|runtime error:' "$log" >&2 || true
  fi
  summary+=("$(printf '%-14s %6ss %12s execs %7s exec/s  cov %6s  ft %7s  corpus %-12s findings %s (rc %s)' \
    "$target" "$seconds" "${execs:-?}" "${speed:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$findings" "$rc")")
done
printf '%s\n' "${summary[@]}"
exit "$status"
