#pragma once
// Which figures a run gets, built from what it holds (report/run_data.h):
//   per evaluated checkpoint (a corruption evaluation gets report/corruption_view.h's figures instead): per-class clean and robust accuracy (with a worst-class marker), the same minus each
//   series' class mean (Benz et al. Figs. 1-2), CFP scores, a confusion heatmap per evaluation, the cross-class
//   cosine similarity of mean logits where results.json has them, CIFAR-100's superclass confusion;
//   from history.csv: per-class curves over epochs for each evaluation kept there;
//   from steps.csv: each class's share of the batch loss per audited step, and cos(g_k, g).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/gnuplot.h"
#include "report/run_data.h"

namespace cw::report {

// "PGD-20, Linf, eps 8/255, 20 steps" from an evaluation's "attack" object; "clean" for the clean evaluation.
std::string attack_description(const nlohmann::json& evaluation);
// ε as the papers write it: "8/255" when it is a whole number of 255ths, else the number.
std::string eps_text(double eps);

// `prefix` keeps the files of several checkpoints apart ("last_", "best_robust_").
std::vector<Figure> evaluation_figures(const nlohmann::json& results, const std::string& prefix);
std::vector<Figure> history_figures(const util::CsvTable& history, const std::vector<std::string>& classes);
std::vector<Figure> step_figures(const util::CsvTable& steps, const std::vector<std::string>& classes);

}  // namespace cw::report
