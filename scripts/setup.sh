#!/usr/bin/env bash
# Installs every Debian package that building and testing xferprof needs, and
# PyTorch (a CUDA 12 build, pinned) into .venv/ at the repository root for the
# torch scenario tests (tests/torch). Idempotent: when everything is already
# installed it prints nothing and touches nothing, so the README's commands can
# call it every time.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential pkg-config meson ninja-build python3
  libsqlite3-dev sqlite3
  libunwind-dev
  libxxhash-dev
  libdw-dev libelf-dev
  zlib1g-dev      # gzip output of xferprof export (-o NAME.gz)
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
# install_torch: PyTorch into .venv/ with Debian's python3 (the interpreter the
# torch tests run). The version is pinned: the one the simulator is tested with
# (README). nvidia-cuda-runtime-cu12 comes with torch; its include/ holds
# NVIDIA's CUDA 12 runtime headers, which the simulator's libcudart.so.12 is
# built against (sim/meson.build). pip keeps its cache in ~/.cache/pip, so a
# fresh clone installs again without downloading the wheels again.
# numpy: torch warns on every run without it.
# perfetto and protobuf: the export tests decode `export -f perfetto-proto`
# with Perfetto's own definitions (perfetto_trace_pb2).
TORCH_VERSION=2.5.1
NUMPY_VERSION=2.1.3
PERFETTO_VERSION=0.59.1
PROTOBUF_VERSION=7.36.2
install_torch() {
  local py=.venv/bin/python3
  if [ -x "$py" ] && "$py" - "$TORCH_VERSION" "$NUMPY_VERSION" "$PERFETTO_VERSION" \
      "$PROTOBUF_VERSION" <<'PY' 2>/dev/null
import importlib.metadata as m, sys
have = tuple(m.version(p) for p in ('torch', 'numpy', 'perfetto', 'protobuf'))
sys.exit(0 if have == tuple(sys.argv[1:5]) else 1)
PY
  then
    return 0
  fi
  echo "xferprof setup: installing torch $TORCH_VERSION, numpy $NUMPY_VERSION, perfetto $PERFETTO_VERSION and protobuf $PROTOBUF_VERSION into .venv (several GB the first time)" >&2
  [ -x "$py" ] || /usr/bin/python3 -m venv .venv
  "$py" -m pip install -q "torch==$TORCH_VERSION" "numpy==$NUMPY_VERSION" \
    "perfetto==$PERFETTO_VERSION" "protobuf==$PROTOBUF_VERSION"
}

if [ ${#missing[@]} -eq 0 ]; then
  install_torch
  exit 0
fi

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
install_torch
