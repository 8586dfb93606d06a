#!/usr/bin/env bash
# Installs everything classwise needs on a fresh Debian 12 machine (run as root, or through sudo).
# The CUDA toolkit (with cuDNN and cuBLAS) is optional and comes from NVIDIA at /usr/local/cuda.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
    g++ make libopenblas-openmp-dev catch2 libstb-dev zlib1g-dev nlohmann-json3-dev libcli11-dev libfmt-dev \
    dataset-fashion-mnist xz-utils unzip clang libclang-rt-14-dev ca-certificates curl
