#!/usr/bin/env bash
# Installs the system packages the build needs, and only those that are missing.
# Idempotent; works as root (as on CI) or through sudo.
set -euo pipefail

packages=(pkg-config libprotobuf-c-dev protobuf-c-compiler libhdf5-dev libopenblas-dev libpng-dev libjpeg62-turbo-dev
          zlib1g-dev libavformat-dev libavcodec-dev libavutil-dev libswscale-dev libjemalloc-dev binutils)

if [ "$(uname -s)" != "Linux" ]; then
    # Accelerate is the BLAS on Apple platforms; the rest comes from Homebrew.
    echo "setup: not Linux; install the libraries yourself: brew install pkg-config protobuf-c hdf5 libpng jpeg-turbo zlib ffmpeg"
    exit 0
fi

missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "setup: system packages present."
    exit 0
fi

as_root=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "setup: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    as_root=(sudo)
fi
echo "setup: installing ${missing[*]}"
"${as_root[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
