// fairtat_cfp — FAIR-TAT (Medi et al., WACV 2025), §4: which classes absorb a robust model's errors? The class
// false-positive score CFP_k (docs/protocols/metrics.md) is the share of all misclassified test samples that the model
// assigns to class k. The paper reads it off RobustBench models on CIFAR-10 ("cat", and "airplane" despite its
// high accuracy); we ask the same of our own models and every attack:
//   1. models: PGD-AT and TRADES trained here as the study's arms (Rice's recipe, PreAct ResNet-18, the last
//      checkpoint), or any checkpoints given with --weights FILE (repeatable; nothing trains then, the architecture
//      comes from each file's metadata);
//   2. each model evaluated clean and under PGD-20, CW-20, APGD-CE, APGD-T, FAB-T and Square (5,000 queries), one
//      results.json per model with the CFP of every evaluation;
//   3. per model and attack the three classes with the largest CFP, and whether the attacks agree on the ranking
//      (Spearman's ρ of the CFP vectors): cfp_table.md (printed) and cfp.csv (every value).
//
//   ./experiments/fairtat_cfp [--quick] [--methods pgd_at,trades] [--final-attacks ...] [--resume]
//   ./experiments/fairtat_cfp --weights a.safetensors --weights b.safetensors [--dataset cifar10] [--eval-n 1000]
#include <filesystem>
#include <iostream>
#include <set>

#include "util/atomic_file.h"
#include "eval/evaluator.h"
#include "train/stop_signal.h"
#include "jobs/audit.h"
#include "protocols/argv_peek.h"
#include "protocols/cfp_analysis.h"
#include "protocols/checkpoint_eval.h"
#include "protocols/cpu_quick_recipe.h"
#include "report/comparison.h"
#include "report/run_data.h"
#include "study/run_sets.h"
#include "study/study.h"
#include "util/flags.h"
#include "util/split_list.h"

namespace fs = std::filesystem;

namespace {
// A folder name per --weights file: its parent folder and stem (pgd_at_last), numbered when two coincide.
std::vector<std::string> model_names(const std::vector<std::string>& files) {
    std::vector<std::string> names;
    std::set<std::string> seen;
    for (const std::string& f : files) {
        const fs::path p(f);
        const std::string parent = p.parent_path().filename().string();
        std::string name = (parent.empty() ? "" : parent + "_") + p.stem().string();
        for (int i = 2; seen.count(name); ++i) name = p.stem().string() + "_" + std::to_string(i);
        seen.insert(name);
        names.push_back(name);
    }
    return names;
}
// A model whose CFP is read: its name and its results.json (records.csv beside it, when there, adds the CFP of the
// samples each attack broke).
struct Model {
    std::string name, results;
};

// --weights: an audit per checkpoint (protocols/checkpoint_eval.h: what `audit` does, plus --classes top:K), then the
// Markdown summary a study writes, so every binary leaves one. Ctrl-C or SIGTERM stops it after the step in progress
// with its state saved, as audit does (eval::EvalInterrupted, which cli::run_guarded reports with the signal's code).
void audit_checkpoints(const std::vector<std::string>& weights, const cw::train::JobConfig& base,
                      const std::string& dataset_flag, bool eps_given, std::vector<Model>& models) {
    using namespace cw;
    const fs::path out(base.common.out);
    train::StopSignalScope signals;
    const std::vector<std::string> names = model_names(weights);
    std::vector<report::RunData> runs;
    for (size_t i = 0; i < weights.size(); ++i) {
        protocols::CheckpointEval c = protocols::checkpoint_eval_like(base, weights[i], (out / names[i]).string());
        c.dataset = dataset_flag;   // empty: the checkpoint's own
        c.attacks = util::split_list(base.final_attacks);
        const nn::Metadata md = nn::read_metadata(c.weights);
        const std::string ds = !c.dataset.empty() ? c.dataset : md.count("dataset") ? md.at("dataset") : "";
        // The dataset's evaluation radius unless --eps says otherwise (not the checkpoint's training ε: models
        // compared should meet the same attack).
        c.eps = eps_given ? eval::parse_fraction("--eps", base.eps) : train::default_eps(ds);
        c.alpha = c.eps / 4;
        std::cout << "== model " << i + 1 << "/" << weights.size() << ": " << c.weights << " into " << c.out_dir << "\n";
        if (c.resume && fs::exists(fs::path(c.out_dir) / "results.json")) {
            std::cout << "finished before; skipped\n";
        } else {
            protocols::evaluate_checkpoint(c, std::cout);   // a signal: EvalInterrupted, for cli::run_guarded
        }
        models.push_back({names[i], (fs::path(c.out_dir) / "results.json").string()});
        runs.push_back(report::load_run(c.out_dir));
    }
    const std::string table = report::markdown_table(report::compare_runs(runs, "", "pgd20"));
    util::write_file_atomic((out / "summary.md").string(), "# Audited checkpoints class by class (FAIR-TAT §4)\n\n" + table);
    std::cout << "\n" << table;
}

// Per model and evaluation the three classes with the largest CFP, and the attacks' agreement: cfp_table.md
// (printed) and cfp.csv.
void write_cfp_tables(const std::vector<Model>& models, const fs::path& out) {
    using namespace cw;
    fs::create_directories(out);
    std::vector<protocols::ModelCfp> cfps;
    for (const Model& m : models) {
        const fs::path records_file = fs::path(m.results).parent_path() / "records.csv";
        const eval::EvalRecords records = fs::exists(records_file)
                                              ? eval::parse_records_csv(util::read_file_text(records_file.string()),
                                                                       records_file.string())
                                              : eval::EvalRecords{};
        cfps.push_back(protocols::model_cfp(m.name, report::load_results_json(m.results),
                                            fs::exists(records_file) ? &records : nullptr));
    }
    const std::string md = "# Which classes absorb the errors (class false-positive score, FAIR-TAT §4)\n\nCFP_k = "
                           "share of the misclassified test samples predicted as class k (under an attack: of the "
                           "samples it breaks and of those wrong already, which every attack keeps; then of the "
                           "broken ones alone). Top 3 per evaluation; ρ = Spearman correlation of the CFP vectors "
                           "of two attacks.\n\n" + protocols::cfp_markdown(cfps);
    util::write_file_atomic((out / "cfp_table.md").string(), md);
    util::write_file_atomic((out / "cfp.csv").string(), protocols::cfp_csv(cfps));
    std::cout << "\n" << md << "wrote " << (out / "cfp_table.md").string() << " and " << (out / "cfp.csv").string() << "\n";
}
}  // namespace

int main(int argc, char** argv) {
    using namespace cw;
    const std::string dataset_flag = protocols::peek_flag(argc, argv, "--dataset", "");
    const std::string dataset = dataset_flag.empty() ? "cifar10" : dataset_flag;
    // ---- the paper's setting (every value is a flag) ---------------------------------------------------------
    train::JobConfig base;
    base.experiment = "fairtat_cfp";
    base.common.out = "runs/fairtat_cfp";
    base.data.dataset = dataset;
    base.final_attacks = "pgd20,cw20,apgd-ce,apgd-t,fab-t,square5000";
    base.final_checkpoints = "last";      // FAIR-TAT reports last checkpoints
    if (dataset == "cifar10") {
        // Rice / CFA / FAIR-TAT recipe (docs/protocols/training.md §3, §5): PRN-18, 200 epochs, reflect crop + flip, CIFAR
        // normalisation inside the model, SGD 0.9, wd 5e-4, lr 0.1 ÷10 at 50% and 75%; TRADES β = 6 (Zhang's form).
        base.arch = "preact_resnet18";
        base.eps = "8/255";
        base.common.epochs = 200;
    } else {
        base.common.epochs = 10;          // no paper setting: the job's defaults (train --help)
    }
    std::string methods = "pgd_at,trades";
    std::vector<std::string> weights;
    // ------------------------------------------------------------------------------------------------------------
    cli::CommonSpec spec;
    spec.program = "fairtat_cfp";
    spec.epochs_help = "training epochs of every model (not used with --weights)";
    spec.quick_preset = protocols::cpu_quick_recipe({{"--train-n", "5000"}, {"--epochs", "5"}, {"--eval-n", "500"},
                                                     {"--epoch-eval-n", "300"},
                                                     {"--final-attacks", "pgd20,cw20,apgd-ce,apgd-t,fab-t,square1000"},
                                                     {"--out", "runs/fairtat_cfp_quick"}});
    spec.quick_what = "LeNet-5 on 5,000 real training images, 5 epochs; 500 test images, Square with 1,000 queries";
    cli::FlagSet app{"classwise fairtat_cfp: which classes absorb the errors of robust models, per attack (FAIR-TAT §4)",
                     "fairtat_cfp"};
    study::StudyFlags study_flags;
    // The paper's architecture and radius for this dataset, shown by --help and --print-config.
    study::add_experiment_flags(app, base, spec, study_flags, {"--arch", "--eps"});
    app.remove("--method");
    app.option("--methods", methods, "the models trained and audited, in order (each in <out>/<method>)")
        .show_default();
    app.option("--weights", weights, "audit this checkpoint instead of training (repeatable; architecture from its "
                                         "metadata; dataset from --dataset, else its metadata)")
        .existing_file();
    if (const int code = cli::parse(app, argc, argv, base.common, spec, std::cout, std::cerr); code >= 0) return code;
    return cli::run_guarded("fairtat_cfp", [&] {
        if (!weights.empty()) {
            std::vector<Model> models;
            audit_checkpoints(weights, base, dataset_flag, app.get("--eps").given(), models);
            write_cfp_tables(models, base.common.out);
            return 0;
        }
        study::Study s;
        s.title = study::data_and_model(base) + ": robust models class by class under attack (FAIR-TAT §4)";
        s.arms = study::arms_for_methods("--methods", methods, base);
        s.attack = "pgd20";
        if (const int code = study::run_study(s, base.common, std::cout, study_flags); code != 0) return code;
        for (const study::RunSet& set : study::run_sets(s, base.common, study_flags)) {   // per seed with --seeds
            std::vector<Model> models;
            for (const study::Arm& a : s.arms)
                models.push_back({a.name, (fs::path(set.dir(a.name)) / "eval_last/results.json").string()});
            write_cfp_tables(models, set.out);
        }
        return 0;
    });
}
