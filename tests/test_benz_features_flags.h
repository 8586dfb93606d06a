#pragma once
// The tiny benz_features study the binary, job and Slurm tests share: the synthetic set, LeNet-5, one epoch per
// source model, 40 feature images and two epochs on each constructed set (seconds per job on the CPU).

namespace cw_experiments_test {

inline const char* kBenzFeaturesTiny =
    "--quick --dataset synthetic --arch lenet5 --train-n 200 --eval-n 40 --epoch-eval-n 20 --epochs 1 --attack-steps 2 "
    "--eval-steps 2 --batch-size 50 --optimizer adam --lr 0.003 --wd 0 --device cpu --seed 1 --feature-n 40 "
    "--feature-steps 10 --feature-batch-size 20 --set-epochs 2";

}  // namespace cw_experiments_test
