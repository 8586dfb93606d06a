#!/usr/bin/env bash
# Fetches a dataset's official archives from the official site, checks the published MD5 checksums and unpacks
# them into the data folder in the layout the loaders read (datasets/README.md).
#
#   scripts/download_data.sh DATASET [DATA_DIR]      (make data DATASET=cifar10)
#   DATASET: mnist fashion-mnist cifar10 cifar100 svhn gtsrb tinyimagenet cifar10c all
#   DATA_DIR: default $CLASSWISE_DATA, else ./data.   SVHN_EXTRA=1 also fetches SVHN's 1.3 GB extra split.
#
# Without internet it stops at the first connection failure (connect timeout 10 s) and says so; it never
# leaves a half-written file under the final name. Archives are kept in DATA_DIR/downloads and reused when
# their checksum still matches.
set -euo pipefail

usage() { echo "usage: $0 {mnist|fashion-mnist|cifar10|cifar100|svhn|gtsrb|tinyimagenet|cifar10c|all} [DATA_DIR]" >&2; exit 2; }
[ $# -ge 1 ] || usage
dataset=$1
data_dir=${2:-${CLASSWISE_DATA:-./data}}
downloads="$data_dir/downloads"
CONNECT_TIMEOUT=10

say() { echo "download_data: $*" >&2; }
die() { say "$*"; exit 1; }

md5_of() { md5sum "$1" | cut -d' ' -f1; }

# fetch NAME MD5 URL... : downloads NAME into $downloads from the first URL that delivers it, checks its MD5.
fetch() {
    local name=$1 md5=$2; shift 2
    local dest="$downloads/$name"
    mkdir -p "$(dirname "$dest")"
    if [ -f "$dest" ] && [ "$(md5_of "$dest")" = "$md5" ]; then say "$name: already downloaded, checksum ok"; return 0; fi
    local url rc host unreachable=""
    for url in "$@"; do
        host=$(echo "$url" | cut -d/ -f3)
        say "$name: fetching $url"
        rc=0
        if command -v curl >/dev/null; then
            # --speed-limit/--speed-time abort a stalled transfer; --max-time caps even a slow but live one.
            curl -fL --connect-timeout "$CONNECT_TIMEOUT" --speed-limit 1024 --speed-time 60 --max-time 21600 \
                 --retry 2 --retry-connrefused -sS -o "$dest.part" "$url" || rc=$?
            case $rc in
                0) ;;
                5|6|7|28|35) unreachable="$unreachable $host" ;;
                *) say "$name: $url failed (curl error $rc)" ;;
            esac
        elif command -v wget >/dev/null; then
            wget -q --connect-timeout="$CONNECT_TIMEOUT" --dns-timeout="$CONNECT_TIMEOUT" --read-timeout=60 \
                 --tries=2 -O "$dest.part" "$url" || rc=$?
            case $rc in
                0) ;;
                4) unreachable="$unreachable $host" ;;
                *) say "$name: $url failed (wget error $rc)" ;;
            esac
        else
            die "neither curl nor wget is installed"
        fi
        if [ $rc -ne 0 ]; then rm -f "$dest.part"; continue; fi
        local got; got=$(md5_of "$dest.part")
        if [ "$got" != "$md5" ]; then
            rm -f "$dest.part"
            die "$name: checksum mismatch (md5 $got, published $md5); not using it"
        fi
        mv "$dest.part" "$dest"
        say "$name: ok (md5 $md5)"
        return 0
    done
    if [ -n "$unreachable" ]; then
        die "cannot reach$unreachable: no internet connection? Put $name (md5 $md5) at $dest by hand and re-run."
    fi
    die "$name: no source could provide it"
}

get_mnist() {
    local f
    mkdir -p "$data_dir/mnist"
    # yann.lecun.com is the official site; the S3 copy is the mirror torchvision uses (same files, same MD5s).
    for f in "train-images-idx3-ubyte.gz f68b3c2dcbeaaa9fbdd348bbdeb94873" \
             "train-labels-idx1-ubyte.gz d53e105ee54ea40749a09fcbcd1e9432" \
             "t10k-images-idx3-ubyte.gz 9fb629c4189551a2d022fa330f9573f3" \
             "t10k-labels-idx1-ubyte.gz ec29112dd5afa0611ce80d1b7f02629c"; do
        set -- $f
        fetch "mnist/$1" "$2" "http://yann.lecun.com/exdb/mnist/$1" "https://ossci-datasets.s3.amazonaws.com/mnist/$1"
        cp "$downloads/mnist/$1" "$data_dir/mnist/$1"
    done
}

get_fashion_mnist() {
    local f base=http://fashion-mnist.s3-website.eu-central-1.amazonaws.com
    mkdir -p "$data_dir/fashion-mnist"
    for f in "train-images-idx3-ubyte.gz 8d4fb7e6c68d591d4c3dfef9ec88bf0d" \
             "train-labels-idx1-ubyte.gz 25c81989df183df01b3e8a0aad5dffbe" \
             "t10k-images-idx3-ubyte.gz bef4ecab320f06d8554ea6380940ec79" \
             "t10k-labels-idx1-ubyte.gz bb300cfdad3c16e7a12a480ee83cd310"; do
        set -- $f
        fetch "fashion-mnist/$1" "$2" "$base/$1"
        cp "$downloads/fashion-mnist/$1" "$data_dir/fashion-mnist/$1"
    done
}

get_cifar10() {
    fetch cifar-10-binary.tar.gz c32a1d4ab5d03f1284b67883e8d87530 https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz
    tar -xzf "$downloads/cifar-10-binary.tar.gz" -C "$data_dir"   # -> cifar-10-batches-bin/
}

get_cifar100() {
    fetch cifar-100-binary.tar.gz 03b5dce01913d631647c71ecec9e9cb8 https://www.cs.toronto.edu/~kriz/cifar-100-binary.tar.gz
    tar -xzf "$downloads/cifar-100-binary.tar.gz" -C "$data_dir"  # -> cifar-100-binary/
}

get_svhn() {
    local base=http://ufldl.stanford.edu/housenumbers
    mkdir -p "$data_dir/svhn"
    fetch train_32x32.mat e26dedcc434d2e4c54c9b2d4a06d8373 "$base/train_32x32.mat"
    fetch test_32x32.mat eb5a983be6a315427106f1b164d9cef3 "$base/test_32x32.mat"
    cp "$downloads/train_32x32.mat" "$downloads/test_32x32.mat" "$data_dir/svhn/"
    if [ "${SVHN_EXTRA:-0}" = 1 ]; then
        fetch extra_32x32.mat a93ce644f1a588dc4d68dda5feec44a7 "$base/extra_32x32.mat"
        cp "$downloads/extra_32x32.mat" "$data_dir/svhn/"
    fi
}

get_gtsrb() {
    local base=https://sid.erda.dk/public/archives/daaeac0d7ce1152aea9b61d9f1e19370
    command -v unzip >/dev/null || die "gtsrb: unzip is needed (apt-get install unzip)"
    fetch GTSRB_Final_Training_Images.zip f33fd80ac59bff73c82d25ab499e03a3 "$base/GTSRB_Final_Training_Images.zip"
    fetch GTSRB_Final_Test_Images.zip c7e4e6327067d32654124b0fe9e82185 "$base/GTSRB_Final_Test_Images.zip"
    fetch GTSRB_Final_Test_GT.zip fe31e9c9270bbcd7b84b7f21a9d9d9e5 "$base/GTSRB_Final_Test_GT.zip"
    unzip -qo "$downloads/GTSRB_Final_Training_Images.zip" -d "$data_dir"   # -> GTSRB/Final_Training/Images/000NN/
    unzip -qo "$downloads/GTSRB_Final_Test_Images.zip" -d "$data_dir"       # -> GTSRB/Final_Test/Images/*.ppm
    # The test labels come separately; the loader reads them next to the test images.
    unzip -qo "$downloads/GTSRB_Final_Test_GT.zip" GT-final_test.csv -d "$data_dir/GTSRB/Final_Test/Images"
}

get_tinyimagenet() {
    command -v unzip >/dev/null || die "tinyimagenet: unzip is needed (apt-get install unzip)"
    fetch tiny-imagenet-200.zip 90528d7ca1a48142e341f4ef8d21d0de http://cs231n.stanford.edu/tiny-imagenet-200.zip
    unzip -qo "$downloads/tiny-imagenet-200.zip" -d "$data_dir"   # -> tiny-imagenet-200/
}

get_cifar10c() {
    fetch CIFAR-10-C.tar 56bf5dcef84df0e2308c6dcbcbbd8499 https://zenodo.org/record/2535967/files/CIFAR-10-C.tar
    tar -xf "$downloads/CIFAR-10-C.tar" -C "$data_dir"   # -> CIFAR-10-C/*.npy
}

mkdir -p "$data_dir"
case $dataset in
    mnist) get_mnist ;;
    fashion-mnist) get_fashion_mnist ;;
    cifar10) get_cifar10 ;;
    cifar100|cifar100-coarse) get_cifar100 ;;
    svhn) get_svhn ;;
    gtsrb) get_gtsrb ;;
    tinyimagenet) get_tinyimagenet ;;
    cifar10c) get_cifar10c ;;
    gtsrb32) die "gtsrb32 is a pre-resized GTSRB copy with no public download: put its train.bin and test.bin (format in datasets/README.md) in $data_dir/gtsrb32, or use --dataset gtsrb, the official images resized on load (make data DATASET=gtsrb)" ;;
    all) get_mnist; get_fashion_mnist; get_cifar10; get_cifar100; get_svhn; get_gtsrb; get_tinyimagenet; get_cifar10c ;;
    *) usage ;;
esac
say "$dataset is in $data_dir"
