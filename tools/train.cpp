// train: adversarial (or natural) training with any method, dataset and architecture, evaluated class by class
// every epoch and at the end. Everything is a flag; see jobs/job.h for the output folder.
//
//   build/tools/train --dataset cifar10 --method trades --epochs 100 --out runs/trades
//   build/tools/train --dataset gtsrb32 --method pgd_at --epochs 5 --train-n 5000 --out runs/gtsrb --resume
#include <iostream>

#include "jobs/job.h"
#include "util/flags.h"

int main(int argc, char** argv) {
    using namespace cw;
    train::JobConfig job;
    job.common.out = "runs/train";
    job.common.epochs = 10;
    cli::CommonSpec spec;
    spec.program = "train";
    spec.quick_preset = {{"--train-n", "2000"}, {"--epochs", "2"}, {"--eval-n", "500"}, {"--batch-size", "64"}};
    spec.quick_what = "a short run on a real subset";
    cli::FlagSet app{"classwise train: one training loop for every method, evaluated class by class", "train"};
    cli::add_common_flags(app, job.common, spec);
    train::add_job_flags(app, job);
    if (const int code = cli::parse(app, argc, argv, job.common, spec, std::cout, std::cerr); code >= 0) return code;
    return cli::run_guarded("train", [&] { return train::run_job(job, std::cout); });
}
