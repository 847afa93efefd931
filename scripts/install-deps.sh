#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine lacks to build, test and run linkwise.
# Idempotent: packages already present are skipped; the Python venv is reused.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  build-essential cmake pkg-config git
  nlohmann-json3-dev libcpp-httplib-dev libsqlite3-dev sqlite3 catch2 libcli11-dev
  libbenchmark-dev libopenmpi-dev openmpi-bin wrk curl
  clang-format           # scripts/format-check.sh (Debian 12: clang-format 14)
  python3-venv python3-dev
  libssl-dev zlib1g-dev  # service: SHA-256 of API keys (OpenSSL EVP), gzip of responses
  libjs-chart.js         # the web page's charts, embedded into the binary at build time
  chromium chromium-driver fonts-liberation  # the web page's browser tests (headless Chromium)
)
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Python side: one venv for the bindings, pytest, notebooks and schemathesis.
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -r scripts/requirements-dev.txt
