#!/usr/bin/env bash
# Installs everything classwise needs on a fresh Debian 12 machine. Run it as it is, not through sudo: as root it
# installs directly (a fresh container or CI has no sudo); as a normal user it elevates itself with sudo.
# Every tool a documented command or script calls is here, or Debian-essential (coreutils, util-linux's flock, sed).
# Optional, not installed: chromium and python3-pil (tools/screenshot_report.sh), python3 with PyTorch (the fixture
# and PyTorch comparison scripts in tools/), the CUDA toolkit (with cuDNN and cuBLAS) from NVIDIA at
# /usr/local/cuda (docs/gpu.md), and slurm-wlm with munge (tests/slurm_one_node.sh, the one-node Slurm the [slurm]
# tests start; they skip without it): Slurm's scripts are meant for a cluster that has its own Slurm, and on a
# workstation these packages add system daemons (munged starts at boot) that classwise never needs.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
as_root=()
if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo > /dev/null 2>&1; then
        echo "scripts/setup_debian.sh: installing packages needs root, and you are $(id -un) with no sudo:" \
             "run it as root (e.g. su -c scripts/setup_debian.sh) or install sudo" >&2
        exit 1
    fi
    # sudo keeps DEBIAN_FRONTEND only when told to.
    as_root=(sudo DEBIAN_FRONTEND=noninteractive)
fi
# A fresh VM often runs unattended-upgrades at boot: wait for its dpkg lock instead of failing at once.
apt=(apt-get -o DPkg::Lock::Timeout=600)
"${as_root[@]}" "${apt[@]}" update -qq
"${as_root[@]}" "${apt[@]}" install -y -qq --no-install-recommends \
    g++ make libopenblas-openmp-dev libdnnl-dev catch2 libstb-dev zlib1g-dev nlohmann-json3-dev libcli11-dev libfmt-dev \
    dataset-fashion-mnist xz-utils unzip clang libclang-rt-14-dev ca-certificates curl \
    gnuplot-nox libxml2-utils libjpeg62-turbo-dev parallel
