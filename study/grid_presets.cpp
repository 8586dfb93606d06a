// The built-in grids of benz_universality: "paper" (Benz et al. §3.1 as far as this machine's loaders reach) and
// "quick" (a small real-data grid for two CPU cores) and "cpu" (CIFAR-10 at the CPU recipe, whole training set). `benz_universality --grid G --print-grid` prints either as
// JSON, the starting point for a grid of one's own.
#include <string>

#include "study/cifar10_cpu_recipe.h"
#include "study/grid.h"

namespace cw::study {

namespace {
void natural_and_at(Grid& g, const std::string& name, const std::string& flags) {
    g.settings.push_back({name + "-natural", split_flags(flags + " --method natural")});
    g.settings.push_back({name + "-pgd_at", split_flags(flags + " --method pgd_at")});
}
}  // namespace

Grid paper_grid() {
    Grid g;
    g.title = "Benz et al. §3.1: is the per-class robustness ranking universal?";
    g.seeds = {0, 1, 2};
    // The paper gives no training recipe: the repository's CIFAR recipe (docs/protocols/training.md §3, Rice et al.) for every
    // cell — SGD 0.9, lr 0.1 ÷10 at 50% and 75%, wd 5e-4, batch 128, 200 epochs; PGD-10 training at the dataset's
    // radius (MNIST 0.3, Fashion-MNIST 0.1, others 8/255); the last model audited with PGD-20.
    g.base_flags = split_flags("--epochs 200 --final-attacks pgd20 --final-checkpoints last");
    // ResNet-18 natural and adversarial on every dataset the loaders know (ImageNet is out of scope: no data).
    for (const std::string d : {"mnist", "fashion-mnist", "svhn", "cifar10", "cifar100", "tinyimagenet", "gtsrb32"})
        natural_and_at(g, d + "-resnet18", "--dataset " + d + " --arch resnet18");
    // CIFAR-10: the architectures (ResNet-18 is above).
    for (const std::string a : {"lenet5", "vgg16", "vgg19", "resnet50", "densenet121", "densenet169", "googlenet"})
        natural_and_at(g, "cifar10-" + a, "--dataset cifar10 --arch " + a);
    // CIFAR-10 ResNet-18: optimiser, schedule and weight decay, one change from the base recipe each.
    natural_and_at(g, "cifar10-resnet18-adam", "--dataset cifar10 --arch resnet18 --optimizer adam --lr 0.001");
    natural_and_at(g, "cifar10-resnet18-cyclic", "--dataset cifar10 --arch resnet18 --schedule cyclic");
    natural_and_at(g, "cifar10-resnet18-wd0", "--dataset cifar10 --arch resnet18 --wd 0");
    natural_and_at(g, "cifar10-resnet18-wd5e-3", "--dataset cifar10 --arch resnet18 --wd 5e-3");
    return g;
}

Grid quick_grid() {
    Grid g;
    g.title = "Benz et al. §3.1 on a CPU: per-class rankings across datasets, architectures, an optimiser and "
              "natural vs adversarial training (small real subsets)";
    g.seeds = {0, 1, 2};
    // Small subsets and two epochs (36 cells in about 20 minutes on two shared cores): Adam at a constant step
    // learns most in so few steps (as xu_preliminary's --quick); 3-step PGD in training, PGD-20 in the audit of the
    // last model on 500 test images. MNIST at ε = 0.1 instead of 0.3: two short epochs of PGD-AT at 0.3 leave
    // every class near 0% robust, and a ranking of zeros says nothing.
    g.base_flags = split_flags("--train-n 2000 --epochs 2 --batch-size 64 --optimizer adam --lr 0.002 --wd 0 "
                               "--schedule constant --augment none --attack-steps 3 --eval-steps 3 --eval-n 500 "
                               "--epoch-eval-n 100 --final-attacks pgd20 --final-checkpoints last");
    for (const std::string a : {"small_cnn", "lenet5"}) natural_and_at(g, "mnist-" + a, "--dataset mnist --eps 0.1 --arch " + a);
    for (const std::string a : {"small_cnn", "lenet5"})
        natural_and_at(g, "fashion-mnist-" + a, "--dataset fashion-mnist --arch " + a);
    natural_and_at(g, "cifar10-lenet5", "--dataset cifar10 --arch lenet5");
    natural_and_at(g, "cifar10-lenet5-sgd", "--dataset cifar10 --arch lenet5 --optimizer sgd --lr 0.05");
    return g;
}

Grid cpu_grid() {
    Grid g;
    g.title = "Benz et al. §3.1 on CIFAR-10 at the CPU recipe: per-class rankings across two architectures, natural "
              "vs adversarial training (whole training set)";
    g.seeds = {0, 1, 2};
    std::string recipe;
    for (const auto& [flag, value] : cifar10_cpu_recipe({{"--final-attacks", "pgd20"}, {"--final-checkpoints", "last"}}))
        recipe += (recipe.empty() ? "" : " ") + flag + " " + value;
    g.base_flags = split_flags(recipe);
    // The recipe's WideResNet-16-1, and the wider, shallower WideResNet-10-2 of about the same cost.
    for (const std::string a : {"wrn16_1", "wrn10_2"}) natural_and_at(g, "cifar10-" + a, "--arch " + a);
    return g;
}

}  // namespace cw::study
