#!/usr/bin/env bash
# The test suite under AddressSanitizer and UndefinedBehaviorSanitizer: builds build-asan/ with
# LINKWISE_SANITIZE (default address,undefined; RelWithDebInfo, no CUDA probes, no benchmarks), runs
# ctest there (Catch2, the CLI tests, the corpus replays of fuzz/) and the REST service's pytest
# suite against the sanitized `linkwise` binary. Any sanitizer report fails the run.
# Not part of scripts/test.sh (it doubles the build time): a CI step of its own (README "Fuzzing
# and sanitizers").
#
#   bash scripts/sanitize.sh              # ctest + REST pytest
#   SANITIZE_PYTEST=0 bash scripts/sanitize.sh   # ctest only
set -euo pipefail
cd "$(dirname "$0")/.."

JOBS=${JOBS:-2}
BUILD=${BUILD:-build-asan}
SANITIZE=${SANITIZE:-address,undefined}
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLINKWISE_SANITIZE="$SANITIZE" \
  -DLINKWISE_CUDA=OFF -DLINKWISE_BUILD_BENCHMARKS=OFF
cmake --build "$BUILD" -j "$JOBS"

# halt_on_error: a UBSan report stops the process, so the test that triggered it fails.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
(cd "$BUILD" && ctest --output-on-failure -j "$JOBS")

if [ "${SANITIZE_PYTEST:-1}" != 0 ]; then
  if [ ! -x .venv/bin/python ]; then
    echo "sanitize.sh: no .venv (bash scripts/install-deps.sh makes it); skipping the REST pytest suite" >&2
  else
    # Only the linkwise binary is instrumented; Python is not, so the options reach just the
    # servers the tests start. Their reports go to files (a server killed by a test would take
    # its stderr with it); any report fails the run.
    reports="$PWD/$BUILD/sanitizer-reports"
    rm -rf "$reports" && mkdir -p "$reports"
    pytest_rc=0
    ASAN_OPTIONS="$ASAN_OPTIONS:log_path=$reports/asan" UBSAN_OPTIONS="$UBSAN_OPTIONS:log_path=$reports/ubsan" \
      LINKWISE_BIN="$PWD/$BUILD/bin/linkwise" .venv/bin/python -m pytest -q tests/service || pytest_rc=$?
    if compgen -G "$reports/*" >/dev/null; then
      echo "sanitize.sh: sanitizer reports from linkwise:" >&2
      cat "$reports"/* >&2
      exit 1
    fi
    if ((pytest_rc != 0)); then exit "$pytest_rc"; fi
  fi
fi
echo "sanitize.sh: clean ($SANITIZE)"
