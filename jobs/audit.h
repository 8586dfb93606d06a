#pragma once
// The `audit` command (tools/audit.cpp): evaluate a checkpoint on a dataset split under a list of attacks and
// write results.json, records.csv and the resumable eval_state.json into --out; with --corruptions also the
// common-corruption evaluation (eval/corruption_eval.h) into --out/corruptions/.
//
//   audit --weights model.safetensors --dataset cifar10 --split test
//         --attacks clean,fgsm,pgd20,cw20,apgd-ce,apgd-t,fab-t,square5000,autoattack --eps 8/255
//         --n 1000 --batch-size 250 --device auto --out runs/audit --seed 0 [--resume] [--arch preact_resnet18]
//         [--corruptions all|benchmark|fair-tat|NAME,... --corruption-severities 1,2,3,4,5]
//
// The architecture comes from the checkpoint's metadata; --arch is needed only for checkpoints without it (and
// must agree with it otherwise). Lives in the library (not in tools/) so the tests can drive it.
#include <ostream>
#include <string>

namespace cw::eval {

// "8/255" or "0.0314"; throws std::invalid_argument naming `flag` on anything else (or a negative value).
float parse_fraction(const std::string& flag, const std::string& text);

// Runs the command; returns the exit status (0 ok, 1 bad flag or failure, with one line on `err`).
int audit_main(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace cw::eval
