#!/usr/bin/env bash
# Builds everything and runs every test: Catch2 (ctest), the Python package's pytest suite, the
# REST service's pytest suite and schemathesis, the web page in headless Chromium, the MPI launcher
# test and every notebook.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh

# Every C++/CUDA source formatted as .clang-format says (reformat: bash scripts/format-check.sh --fix).
bash scripts/format-check.sh

JOBS=${JOBS:-$(nproc)}
BUILD=${BUILD:-build}
# Warnings are errors here (LINKWISE_WERROR): a new warning fails the test command, not a user's build.
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DLINKWISE_WERROR=ON
cmake --build "$BUILD" -j "$JOBS"
(cd "$BUILD" && ctest --output-on-failure -j "$JOBS")

# The REST service: the real `linkwise serve` under pytest, schemathesis against /openapi.json.
LINKWISE_BIN="$PWD/$BUILD/bin/linkwise" .venv/bin/python -m pytest -q tests/service

# The web page at /: headless Chromium (Debian's chromium + chromium-driver, via Selenium) against a
# real `linkwise serve`; screenshots and the first-view budget land in $BUILD/web-artifacts.
LINKWISE_BIN="$PWD/$BUILD/bin/linkwise" LINKWISE_WEB_ARTIFACTS="$PWD/$BUILD/web-artifacts" \
  .venv/bin/python -m pytest -q tests/web

# The Python package, built by scikit-build-core from the same CMake (build dir build-py/), into the
# venv; its pytest suite compares with the CLI's --json and runs every notebook in notebooks/.
CMAKE_BUILD_PARALLEL_LEVEL="$JOBS" .venv/bin/python -m pip install -q .
LINKWISE_BIN="$PWD/$BUILD/bin/linkwise" MPLBACKEND=Agg .venv/bin/python -m pytest -q tests/python

# Where a CUDA toolkit is installed (by hand: Debian 12 has none), the build above compiled the CUDA
# probes; the stubs a machine without CUDA builds are then built and checked here too, so both probe
# paths compile wherever this runs (CI's clean Debian machine builds only the stubs, above).
if command -v nvcc >/dev/null 2>&1; then
  cmake -S . -B "$BUILD-nocuda" -DCMAKE_BUILD_TYPE=Release -DLINKWISE_WERROR=ON -DLINKWISE_CUDA=OFF \
        -DLINKWISE_BUILD_BENCHMARKS=OFF
  cmake --build "$BUILD-nocuda" -j "$JOBS" --target linkwise linkwise_probe_tests
  "$BUILD-nocuda/bin/linkwise_probe_tests"
  "$BUILD-nocuda/bin/linkwise" probe --list | grep -Eq '^topology +any +skipped'
fi
