#!/usr/bin/env bash
# Install every Debian package lossless needs to build and test.
# Idempotent: exits at once when everything is present. Needs root (or sudo)
# only when something is missing.  Usage: scripts/install-deps.sh [--check]
set -euo pipefail
PKGS=(
  build-essential cmake ninja-build pkg-config time python3 ccache
  libfmt-dev libcli11-dev libyaml-cpp-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev libsqlite3-dev
  clang libclang-rt-14-dev clang-tidy
  chromium chromium-driver python3-selenium tshark
  libopenmpi-dev openmpi-bin
)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
if [ "${1:-}" = "--check" ]; then echo "missing packages: ${missing[*]}" >&2; exit 1; fi
echo "installing: ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "error: need root to install: ${missing[*]}" >&2; exit 1; }
  SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
