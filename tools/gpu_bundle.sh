#!/bin/bash
# Packs what a lent GPU machine needs to run the reproduction study of one dataset on its GPU (scripts/reproduction.sh
# with DEVICE=cuda), into one folder to carry there. Such a machine receives only the working tree and the paths a
# call carries (64 MiB in all): none of our Debian libraries, no dataset, no build. Run from a built tree (make).
#   tools/gpu_bundle.sh DEST [DATASET]      (DATASET: fashion-mnist, the default; gtsrb32's files exceed 64 MiB)
# DEST should be a folder git ignores (e.g. .gpu). It gets bin.tar.xz (train, audit and the CUDA plugin, stripped,
# with the shared libraries they load from Debian packages; CUDA's and cuDNN's stay behind: the machine has them)
# and data/<dataset>/ (the files as the loader reads them). Then, on the GPU machine, carrying DEST:
#   tools/gpu_study.sh DEST [DATASET] [OUT]
set -euo pipefail
dest=${1:?usage: tools/gpu_bundle.sh DEST [DATASET]}
dataset=${2:-fashion-mnist}
case $dataset in
    fashion-mnist) ;;
    *) echo "tools/gpu_bundle.sh: DATASET must be fashion-mnist, not '$dataset' (the carried tree holds 64 MiB)" >&2; exit 2 ;;
esac
binaries="build/tools/train build/tools/audit"
plugin=build/libclasswise_cuda.so
for f in $binaries $plugin; do
    [ -x "$f" ] || { echo "tools/gpu_bundle.sh: $f is missing: build it first (make, and make cuda for the plugin: it needs nvcc and cuDNN)" >&2; exit 1; }
done
staging=$(mktemp -d)
trap 'rm -rf "$staging"' EXIT
mkdir -p "$staging/lib"
for f in $binaries $plugin; do strip -o "$staging/$(basename "$f")" "$f"; done
# Every shared library the binaries load, except glibc's own (the loader, libc, libm, ...) and CUDA's, which the
# GPU machine provides in the versions its driver needs.
ldd $binaries | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u | while read -r lib; do
    case $(basename "$lib") in
        libc.so*|libm.so*|libdl.so*|librt.so*|libpthread.so*|ld-linux*|libcuda*|libcublas*|libcudnn*) continue ;;
    esac
    cp -L "$lib" "$staging/lib/"
done
mkdir -p "$dest"
tar -C "$staging" -cJf "$dest/bin.tar.xz" .
mkdir -p "$dest/data/$dataset"
for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
    src=""
    for dir in "${CLASSWISE_DATA:-./data}/$dataset" /usr/share/datasets/fashion-mnist; do
        [ -s "$dir/$f.gz" ] && { src=$dir/$f.gz; break; }
    done
    [ -n "$src" ] || { echo "tools/gpu_bundle.sh: $f.gz not found (apt-get install dataset-fashion-mnist)" >&2; exit 1; }
    cp "$src" "$dest/data/$dataset/"
done
echo "$dest: $(du -sh "$dest" | cut -f1) to carry (at most 64 MiB with the working tree); on the GPU machine:"
echo "  tools/gpu_study.sh $dest $dataset \$OUT"
