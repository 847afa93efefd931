#!/usr/bin/env bash
# The main job on a fresh machine: install what is missing, build, and start the REST service on
# the embedded SQLite catalog (loopback, port 8080 unless PORT is set).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$(nproc)" --target linkwise
exec build/bin/linkwise serve --port "${PORT:-8080}" "$@"
