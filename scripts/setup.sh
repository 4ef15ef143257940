#!/usr/bin/env bash
# Installs every Debian package that building and testing xferprof needs.
# Idempotent: when everything is already installed it prints nothing and
# touches nothing, so the README's commands can call it every time.
set -euo pipefail

packages=(
  build-essential pkg-config meson ninja-build python3
  libsqlite3-dev sqlite3
  libunwind-dev
  libxxhash-dev
  libdw-dev libelf-dev
  libcmocka-dev
  clang
  chromium        # headless, for the HTML report tests (tests/html)
  fonts-dejavu-core  # text in its screenshots
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  SUDO=sudo
else
  SUDO=
fi
echo "xferprof setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

if [ ! -d "${CUDA_ROOT:-/usr/local/cuda}/include" ]; then
  echo "xferprof setup: no CUDA toolkit at ${CUDA_ROOT:-/usr/local/cuda}; the headers are needed to build (set CUDA_ROOT)" >&2
  exit 1
fi
