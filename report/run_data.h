#pragma once
// Everything a run left behind, as the report reads it. A run is a folder written by `train`, `quickstart`, an
// experiment or `audit`; the report works on whatever of these it holds:
//   results.json                     an audit (or one evaluation) — in the folder itself
//   eval_<checkpoint>/results.json   a training run's final evaluations (last, best_robust, ...)
//                                    (eval_<checkpoint>_corruptions/: its common-corruption evaluation)
//   corruptions/results.json         an audit's common-corruption evaluation (audit --corruptions)
//   history.csv, steps.csv, train_log.csv, job.json   a training run's history, step audit, epochs, configuration
// A results.json is checked against the contract (docs/results_json.md) when read.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "util/csv.h"

namespace cw::report {

struct Evaluation {
    std::string checkpoint;     // "last", "best_robust", ... (from eval_<checkpoint>/); "" for the folder's own
    std::string file;           // the results.json read
    nlohmann::json results;
};

struct RunData {
    std::string dir;            // as given
    std::string name;           // the folder's name, for titles and columns
    std::vector<std::string> classes;
    std::vector<Evaluation> evaluations;
    std::optional<util::CsvTable> history, steps, train_log;
    nlohmann::json job;         // job.json; null when absent
    std::vector<std::string> notes;   // what is missing or unfinished, said on the page

    // The evaluation of `checkpoint` ("" = the first one); nullptr if none.
    const Evaluation* evaluation(const std::string& checkpoint = "") const;
};

// Reads a run folder, or one results.json given as a file. Throws std::runtime_error (one line naming the path)
// when the path does not exist, when a results.json is malformed or breaks the contract, or when the folder holds
// none of the files above.
RunData load_run(const std::string& path);

// Reads and checks one results.json: JSON syntax, the schema tag, every contract field, and one entry per class in
// each per-class list and confusion row. Throws naming the file and what was expected.
nlohmann::json load_results_json(const std::string& file);

// A per-class list of results.json (null, for a class without samples, becomes NaN).
std::vector<double> per_class_values(const nlohmann::json& evaluation, const std::string& key);
// The evaluation named `name` ("clean", "pgd20", ...) in a results.json; nullptr if absent.
const nlohmann::json* find_evaluation(const nlohmann::json& results, const std::string& name);

}  // namespace cw::report
