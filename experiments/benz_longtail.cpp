// benz_longtail — Benz et al., "Robustness may be at odds with fairness" (proposal), §3.3: can the long-tail
// remedies be carried over to adversarial training? Each remedy (docs/protocols/longtail.md) is one arm of a study, all trained
// the same way as the PGD-AT baseline and compared with it class by class:
//   pgd_at            the baseline
//   cs_equal          scenario 1 (every class equally important): cost-sensitive weights w_k ∝ (1 − r_k)^p
//   cs_critical_w2/5  scenario 2 (one critical class): the critical class weighted ω = 2 and ω = 5
//   class_balanced    Cui et al.'s class-balanced loss on last epoch's robustly-correct counts
//   ldam_drw          LDAM margins with deferred re-weighting
//   cosine_reg        the inter-class cosine-similarity regulariser
//   target_critical   targeted PGD toward the critical class for a share p_t of the samples
// Beyond the study's summary: per arm the critical class's clean and robust accuracy and its change against PGD-AT,
// the average, the worst class and the other classes' mean change (scenario 2's aim: raise the critical class at
// least cost to the others) — longtail_table.md / .json and longtail.html, the critical class highlighted.
//
//   ./experiments/benz_longtail [--quick] [--arms pgd_at,cs_critical_w2,...] [--critical-class cat|3]
//                               [--critical-weights 2,5] [--cs-power 1] [--dataset cifar10] [--resume]
// Setting (the proposal gives none beyond "ResNet18, CIFAR-10"): the shared recipe of docs/protocols/training.md §3 with the
// standard CIFAR ResNet-18, PGD-AT at 8/255 (10 steps of 2/255), last and best-robust checkpoints, PGD-20.
#include <filesystem>
#include <iostream>

#include "datasets/registry.h"
#include "util/atomic_file.h"
#include "protocols/benz_outputs.h"
#include "protocols/cpu_quick_recipe.h"
#include "protocols/longtail_arms.h"
#include "protocols/longtail_table.h"
#include "report/figure_bars.h"
#include "report/html.h"
#include "report/run_data.h"
#include "study/run_sets.h"
#include "study/study.h"
#include "util/flags.h"
#include "util/split_list.h"

namespace fs = std::filesystem;
using namespace cw;

namespace {

const char* kCriticalStyle =
    "<style>td.critical{background:#fff2b3;font-weight:bold}</style>\n";

// The change of every class's robust accuracy against the baseline, one series per remedy: where the gain went and
// who paid for it. The critical class is named in its axis label.
report::Figure delta_figure(const std::vector<std::string>& classes, int critical,
                            const std::vector<protocols::ArmAccuracy>& arms, const std::string& baseline,
                            const std::string& attack) {
    report::BarChart chart;
    chart.name = "longtail_delta_" + attack;
    chart.caption = "Change of each class's " + attack + " accuracy against " + baseline + " (points); critical class: " +
                    classes[static_cast<size_t>(critical)];
    chart.ylabel = "change (points)";
    chart.centred = true;
    chart.classes = classes;
    chart.classes[static_cast<size_t>(critical)] += " (critical)";
    const protocols::ArmAccuracy* base = nullptr;
    for (const auto& a : arms)
        if (a.arm == baseline) base = &a;
    for (const auto& a : arms) {
        if (&a == base) continue;
        report::Series s{a.arm, {}};
        for (size_t k = 0; k < classes.size(); ++k) s.values.push_back(100 * (a.per_class[k] - base->per_class[k]));
        chart.series.push_back(s);
    }
    return report::bar_figure(chart);
}

// The dataset's class names, cut to the kept ones under --classes top:K. Those are relabelled 0..K-1 in an order
// known only once the data is read, so the critical class must then be given as an index.
std::vector<std::string> kept_class_names(const train::JobConfig& base, const std::string& critical_text) {
    std::vector<std::string> classes = data::dataset_class_names(base.data.dataset, base.common.data_dir);
    if (base.data.classes == "all") return classes;
    if (critical_text.empty() || critical_text.find_first_not_of("0123456789") != std::string::npos)
        throw std::invalid_argument("--critical-class: with --classes " + base.data.classes +
                                    " give the index of a kept class");
    classes.resize(static_cast<size_t>(train::classes_kept("--classes", base.data.classes,
                                                           static_cast<int>(classes.size()))));
    return classes;
}

// The critical-class view from each arm's last checkpoint, for one set of runs (study/run_sets.h): longtail_table.md
// / .json, longtail.html (with the change-per-class figure when gnuplot is there) in the set's folder, and a link
// from the study's summary.
void write_critical_tables(const study::Study& s, int critical, const study::RunSet& set) {
    const fs::path out(set.out);
    fs::create_directories(out);
    const std::string title = set.titled(s.title);
    std::vector<protocols::ArmAccuracy> clean, robust;
    std::vector<std::string> classes;
    for (const study::Arm& a : s.arms) {
        const std::string file = (fs::path(set.dir(a.name)) / "eval_last" / "results.json").string();
        const nlohmann::json r = report::load_results_json(file);
        classes = r.at("classes").get<std::vector<std::string>>();
        const nlohmann::json* c = report::find_evaluation(r, "clean");
        const nlohmann::json* adv = report::find_evaluation(r, s.attack);
        if (!c || !adv) throw std::runtime_error(file + ": no clean or " + s.attack + " evaluation");
        clean.push_back({a.name, report::per_class_values(*c, "per_class_accuracy")});
        robust.push_back({a.name, report::per_class_values(*adv, "per_class_accuracy")});
    }
    const protocols::CriticalTable tc = protocols::critical_table("clean", clean, "pgd_at", critical);
    const protocols::CriticalTable tr = protocols::critical_table(s.attack, robust, "pgd_at", critical);
    std::vector<std::string> labels;
    std::vector<std::vector<double>> columns;
    for (size_t i = 0; i < s.arms.size(); ++i) {
        labels.push_back(s.arms[i].name + " clean");
        columns.push_back(clean[i].per_class);
        labels.push_back(s.arms[i].name + " " + s.attack);
        columns.push_back(robust[i].per_class);
    }
    const std::string name = classes[static_cast<size_t>(critical)];
    const std::string intro =
        "Last checkpoint; accuracies in %, changes (Δ) in points against pgd_at. Critical class: **" + name +
        "**. average = class mean; worst class = the lowest class of that arm; others' mean Δ = mean change of "
        "the classes other than " + name + " (scenario 2's cost). cs_equal is scenario 1 (no critical class): "
        "read its worst class and spread.\n\n";
    const std::string md = "# " + title + "\n\n" + intro + "## Under " + s.attack + "\n\n" +
                           protocols::critical_markdown(tr, classes) + "\n## Clean\n\n" +
                           protocols::critical_markdown(tc, classes) + "\n## Every class\n\n" +
                           protocols::critical_per_class_markdown(classes, critical, labels, columns);
    util::write_file_atomic((out / "longtail_table.md").string(), md);
    util::write_file_atomic((out / "longtail_table.json").string(),
                            nlohmann::json{{"attack", s.attack},
                                           {"clean", protocols::critical_json(tc, classes)},
                                           {"robust", protocols::critical_json(tr, classes)}}
                                .dump(2));
    std::string figure_html;
    if (report::gnuplot_available() && s.arms.size() > 1) {
        const report::RenderedFigure f =
            report::render(delta_figure(classes, critical, robust, "pgd_at", s.attack), (out / "figures").string());
        figure_html = report::html_figure(f, out.string());
    }
    const std::string body =
        std::string(kCriticalStyle) + "<h1>" + report::html_escape(title) + "</h1>\n<p>Last checkpoint; changes "
        "in points against pgd_at; the critical class (" + report::html_escape(name) + ") highlighted. "
        "<a href=\"" + set.up + "compare.html\">All arms side by side</a>, <a href=\"longtail_table.md\">the tables as "
        "Markdown</a>.</p>\n<h2>Under " + report::html_escape(s.attack) + "</h2>\n" +
        protocols::critical_html(tr, classes) + "<h2>Clean</h2>\n" + protocols::critical_html(tc, classes) +
        figure_html + "<h2>Every class</h2>\n" +
        protocols::critical_per_class_html(classes, critical, labels, columns);
    util::write_file_atomic((out / "longtail.html").string(), report::html_page(title, body));
    // The study's summary links the critical-class view.
    protocols::append_to_summary(set.study_out, set.titled("Critical class " + name) + ": [longtail_table.md](" +
                                                    set.link + "longtail_table.md), [longtail.html](" + set.link +
                                                    "longtail.html).\n");
    std::cout << "\n" << md << "\nwrote " << (out / "longtail_table.md").string() << ", "
              << (out / "longtail_table.json").string() << " and " << (out / "longtail.html").string() << "\n";
}

}  // namespace

int main(int argc, char** argv) {
    // ---- the paper's setting (every value is a flag) ---------------------------------------------------------
    train::JobConfig base;
    base.experiment = "benz_longtail";
    base.common.out = "runs/benz_longtail";
    base.common.epochs = 200;                // docs/protocols/training.md §3 (Rice et al.'s recipe; the proposal gives none)
    base.data.dataset = "cifar10";
    base.arch = "resnet18";                  // "ResNet18" (the proposal), the standard CIFAR ResNet
    base.eps = "8/255";
    base.trainer.recipe.lr = 0.1;            // piecewise ÷10 at 50% and 75%, SGD 0.9, wd 5e-4, batch 128
    base.final_attacks = "pgd20";
    base.final_checkpoints = "last,best_robust";
    std::string arms = "all";
    std::string critical_text;               // empty: "cat" where the dataset has it (CIFAR-10), else required
    std::string critical_weights = "2,5";    // docs/protocols/longtail.md §1: ω ∈ {2, 5}, one arm each
    // ------------------------------------------------------------------------------------------------------------
    cli::CommonSpec spec;
    spec.program = "benz_longtail";
    spec.epochs_help = "training epochs of every arm";
    // ResNet-18 trains at a few images/s with PGD-10 on two cores: the quick run is the CPU recipe's LeNet-5.
    spec.quick_preset = protocols::cpu_quick_recipe({{"--train-n", "5000"}, {"--epochs", "5"}, {"--eval-n", "1000"},
                                                     {"--epoch-eval-n", "200"}, {"--final-checkpoints", "last"},
                                                     {"--out", "runs/benz_longtail_quick"}});
    spec.quick_what = "all eight arms, LeNet-5 on 5,000 real CIFAR-10 images, 5 epochs, 5-step attacks, 1,000 test images";
    cli::FlagSet app{"classwise benz_longtail: long-tail remedies against PGD-AT, per class, critical class highlighted "
                     "(Benz et al. 3.3)", "benz_longtail"};
    study::StudyFlags study_flags;
    // The paper's settings for these flags, shown by --help and --print-config.
    study::add_experiment_flags(app, base, spec, study_flags, {"--arch", "--eps"});
    // The method flag picks one method; here the arms do. The job's integer --critical-class and single
    // --critical-weight are replaced by a name-or-index and one arm per weight.
    app.remove("--method");
    app.remove("--critical-class");
    app.remove("--critical-weight");
    app.option("--arms", arms, "the arms to run, comma-separated, pgd_at among them (default all: pgd_at, cs_equal, "
                                   "cs_critical_w<omega> per --critical-weights, class_balanced, ldam_drw, cosine_reg, "
                                   "target_critical)").show_default();
    app.option("--critical-class", critical_text,
               "the critical class of scenario 2 and of targeted AT: a class name or index (default: cat, the "
               "paper's example, on CIFAR-10; other datasets must name one)");
    app.option("--critical-weights", critical_weights,
               "omega of the scenario-2 cost-sensitive arms, one arm each (docs/protocols/longtail.md §1: 2 and 5)")
        .show_default();
    if (const int code = cli::parse(app, argc, argv, base.common, spec, std::cout, std::cerr); code >= 0) return code;
    return cli::run_guarded("benz_longtail", [&] {
        const std::vector<std::string> classes = kept_class_names(base, critical_text);
        const int critical = protocols::resolve_critical_class(critical_text, classes);
        const std::vector<float> weights = protocols::parse_critical_weights("--critical-weights", critical_weights);
        study::Study s;
        s.title = study::data_and_model(base) +
                  ": long-tail remedies against PGD-AT, critical class " + classes[static_cast<size_t>(critical)] +
                  " (Benz et al. 3.3)";
        s.arms = protocols::select_longtail_arms("--arms", protocols::longtail_arms(base, critical, weights), arms);
        const std::vector<std::string> attacks = util::split_list(base.final_attacks);
        if (attacks.empty()) throw std::invalid_argument("--final-attacks: the robust column needs an attack");
        s.attack = attacks.front();
        std::cout << "critical class: " << classes[static_cast<size_t>(critical)] << " (index " << critical << ")\n";
        if (const int code = study::run_study(s, base.common, std::cout, study_flags); code != 0) return code;

        for (const study::RunSet& set : study::run_sets(s, base.common, study_flags))
            write_critical_tables(s, critical, set);
        return 0;
    });
}
