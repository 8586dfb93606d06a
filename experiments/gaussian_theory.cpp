// gaussian_theory — FRL §3 (Xu et al., "To be robust or to be fair"), the conceptual example, computed and trained.
//
// Two Gaussian classes x | y ~ N(y·θ, σ_y² I), θ = (γ·1_m, η·1_d): m robust features that an ε-attack cannot flip
// and d ≫ m non-robust ones that it can; class +1 has K times the standard deviation of class -1. The paper's
// claim: the best natural linear classifier uses all m + d features and treats the classes almost alike, the best
// robust one can only use the m robust features, and in that low-dimensional space the variance difference shows
// up as a large clean-error gap between the classes (Ω > 1, growing with d/m).
//
// Protocol (docs/protocols/gaussian_theory.md):
//   1. The closed forms at the configuration below: Theorem 1 (natural optimum f), Theorem 2 (robust optimum
//      f_adv at radius ε), robust errors at the test radius ε₀, Corollary 1's Ω.
//   2. For each K of --k-sweep (ε fixed) and each training radius ε of --eps-sweep (K fixed): sample --samples training
//      and --test-samples test points, train f (natural) and f_adv (adversarial at ε) as linear models with the
//      engine (sigmoid loss, the smooth form of the paper's 0-1 objective; the worst L∞ perturbation of a linear
//      model is exactly -y·ε·sign(w), so adversarial training uses it instead of PGD; train/gaussian_linear.h),
//      and report each trained model's exact class-wise errors (docs/protocols/gaussian_theory.md §2 on its own w and b) next to
//      the theorems, its non-robust/robust weight ratio and Ω.
//   3. Write theory.csv (and print it), <name>/results.json and records.csv per trained model (the "fgsm"
//      evaluation is the exact worst case), report.html with the figures.
// Each trained model is a study job (protocols/gaussian_models.h), so the cluster flags of every experiment binary
// work here too (docs/cluster.md): --list-jobs, --job <name>, --seeds, --slurm; steps 1 and 3 are the study's
// summary, after a full run or by --summary over whichever models have finished.
//
//   ./experiments/gaussian_theory [--quick] [--K 2] [--eps 0.5] [--eps0 0.5] [--d 1000] [--samples 20000] ...
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/common_flags.h"
#include "datasets/gaussian_comparison.h"
#include "engine/device.h"
#include "protocols/gaussian_models.h"
#include "report/gaussian_page.h"
#include "report/gnuplot.h"
#include "study/study.h"
#include "util/atomic_file.h"
#include "util/flags.h"

using namespace cw;
using protocols::GaussianConfig;
namespace fs = std::filesystem;

namespace {

constexpr int64_t kDefaultEpochs = 20;

void print_theory(const fairness::GaussianTheoryParams& p, std::ostream& out) {
    const fairness::GaussianConstants k = fairness::constants(p);
    const fairness::TheoremErrors nat = fairness::theorem1(p), adv = fairness::theorem2(p);
    out << std::defaultfloat << std::setprecision(6);   // the jobs' lines before may have left another precision
    out << "theory at m=" << p.data.m << " d=" << p.data.d << " gamma=" << p.data.gamma << " eta=" << p.data.eta
        << " sigma=" << p.data.sigma << " K=" << p.data.K << " eps=" << p.eps << " eps0=" << p.eps0 << ":\n"
        << "  q(K)=" << k.q << " S=" << k.S << " A=" << k.A << " B=" << k.B << " b_nat=" << fairness::b_nat(p)
        << " b_adv=" << fairness::b_adv(p) << "\n";
    auto line = [&](const char* what, const fairness::ClassErrors& e) {
        out << "  " << what << ": class -1 " << 100 * e.error[0] << "%, class +1 " << 100 * e.error[1] << "%\n";
    };
    line("natural f, clean (Theorem 1)  ", nat.clean);
    line("natural f, robust at eps0     ", nat.robust);
    line("AT f_adv, clean (Theorem 2)   ", adv.clean);
    line("AT f_adv, robust at eps0      ", adv.robust);
    out << "  Omega (Corollary 1) = " << fairness::omega(p) << "\n";
}

// The models of one seed (none without --seeds): name → classifier, for those finished.
using Finished = std::map<std::optional<uint64_t>, std::map<std::string, fairness::LinearClassifier>>;

// Steps 1 and 3 over the finished models: the theorems, then for each sweep point whose two models (f at its K,
// f_adv at its K and ε) have finished the row of theory and trained errors; theory.csv, config.json, the page.
int summarise(const GaussianConfig& c, const cli::CommonFlags& common, const Finished& finished,
              const std::vector<std::string>& model_files, std::ostream& out) {
    print_theory(protocols::base_params(c), out);
    const std::map<std::string, std::vector<double>> sweeps = {{"K", protocols::parse_sweep("--k-sweep", c.k_sweep)},
                                                               {"eps", protocols::parse_sweep("--eps-sweep", c.eps_sweep)}};
    std::vector<fairness::GaussianComparison> rows;
    std::vector<report::GaussianSweepPlot> plots;
    for (const auto& [seed, models] : finished)
        for (const auto& [sweep, xs] : sweeps) {
            if (xs.empty()) continue;
            report::GaussianSweepPlot plot;
            plot.name = seed ? sweep + "_seed" + std::to_string(*seed) : sweep;
            plot.xlabel = sweep == "K" ? "K (class +1 standard deviation / class -1)"
                                       : "eps (adversarial training radius; test radius eps0 fixed)";
            for (double x : xs) {
                const fairness::GaussianTheoryParams p = protocols::sweep_point(c, sweep, x);
                const std::string nat = protocols::model_name(p.data.K, false);
                const std::string adv = protocols::model_name(p.data.K, true, p.eps);
                if (!models.count(nat) || !models.count(adv)) {
                    out << "sweep " << plot.name << " at " << protocols::tag(x) << ": no row yet (" << nat << " and "
                        << adv << " must both have finished)\n";
                    continue;
                }
                plot.rows.push_back(fairness::compare(plot.name, p, models.at(nat), models.at(adv)));
                plot.rows_x.push_back(x);
            }
            const int n = 60;
            for (int i = 0; i <= n; ++i) {
                const double x = xs.front() + (xs.back() - xs.front()) * i / n;
                plot.dense_x.push_back(x);
                plot.dense.push_back(protocols::sweep_point(c, sweep, x));
            }
            rows.insert(rows.end(), plot.rows.begin(), plot.rows.end());
            plots.push_back(plot);
        }
    const Device device = resolve_device(common.device, false);
    // Figures left from an earlier run with other sweeps would sit beside the new ones looking current.
    fs::remove_all(fs::path(common.out) / "figures");
    util::write_file_atomic((fs::path(common.out) / "theory.csv").string(), fairness::comparison_csv(rows));
    out << "\nclass-wise errors in %, each cell: theory (optimal linear classifier) | trained model (exact error of its "
           "own w, b)\n"
        << fairness::comparison_text(rows);

    const nlohmann::json config = {
        {"experiment", "gaussian_theory"}, {"m", c.m}, {"d", c.d}, {"gamma", c.gamma}, {"eta", c.eta},
        {"sigma", c.sigma}, {"K", c.K}, {"eps", c.eps}, {"eps0", c.eps0}, {"k_sweep", c.k_sweep},
        {"eps_sweep", c.eps_sweep}, {"samples", c.samples}, {"test_samples", c.test_samples},
        {"loss", c.loss}, {"batch_size", c.batch_size}, {"lr", c.lr}, {"bias_lr", c.bias_lr},
        {"epochs", common.epochs}, {"seed", common.seed},
        {"device", device.str()}, {"command_line", common.command_line}};
    util::write_file_atomic((fs::path(common.out) / "config.json").string(), config.dump(2) + "\n");

    report::GaussianPage page;
    page.title = "FRL §3: the Gaussian example, theory and trained linear models";
    page.intro = "Two Gaussian classes, class +1 with K times the standard deviation of class -1; m robust and d "
                 "non-robust features. Theory: the optimal linear classifiers of Xu et al. (Theorems 1 and 2). "
                 "Trained: linear models trained with the engine (" + c.loss + " loss; adversarial training with the "
                 "exact worst-case perturbation -y*eps*sign(w)), their class-wise errors computed exactly from their "
                 "own w and b.";
    for (const auto& [key, value] : config.items())
        if (key != "command_line" && key != "experiment") page.config.push_back({key, value.dump()});
    page.command_line = common.command_line;
    page.rows = rows;
    page.plots = plots;
    page.files = {"theory.csv", "config.json"};
    page.files.insert(page.files.end(), model_files.begin(), model_files.end());
    const bool figures = report::gnuplot_available();
    if (!figures) out << "warning: gnuplot not found (scripts/setup_debian.sh installs gnuplot-nox): no figures\n";
    out << "wrote " << (fs::path(common.out) / "theory.csv").string() << " and "
        << report::write_gaussian_page(page, common.out, figures) << "\n";
    return 0;
}

// One job per trained model; the summary reads the finished ones back.
study::Study gaussian_study(const GaussianConfig& c, const cli::CommonFlags& common) {
    study::Study s;
    s.title = "FRL §3: the Gaussian example, theory and trained linear models";
    for (const protocols::GaussianModel& m : protocols::gaussian_models(c)) {
        study::Arm a;
        a.name = m.name;
        a.work = protocols::model_work(c, m);
        s.arms.push_back(a);
    }
    s.summary = [c, common](const std::vector<study::StudyJob>& jobs, std::ostream& out) {
        Finished finished;
        std::vector<std::string> files;
        for (const study::StudyJob& j : jobs) {
            const std::string name = j.seed ? j.id.substr(0, j.id.rfind('/')) : j.id;
            finished[j.seed][name] = protocols::load_model(j.dir);
            files.push_back(j.id + "/results.json");
        }
        return summarise(c, common, finished, files, out);
    };
    return s;
}

}  // namespace

int main(int argc, char** argv) {
    GaussianConfig c;
    cli::CommonFlags common;
    common.out = "runs/gaussian_theory";
    common.epochs = kDefaultEpochs;
    cli::CommonSpec spec;
    spec.program = "gaussian_theory";
    spec.epochs_help = "training epochs of each linear model";
    spec.resume_help = "keep the models that finished before (a run without it trains every model again, about 20 s)";
    spec.quick_preset = {{"--samples", "8000"},   {"--test-samples", "2000"}, {"--epochs", "10"},
                         {"--k-sweep", "1.5,2,3"}, {"--eps-sweep", "0.1,0.5,0.7"}, {"--out", "runs/gaussian_theory_quick"}};
    spec.quick_what = "the same protocol with fewer samples, epochs and sweep points, seconds on two cores";
    cli::FlagSet app{"FRL §3's Gaussian example: class-wise errors of the optimal and of trained linear classifiers, "
                     "natural and adversarial (no data files: --data-dir is not used)", "gaussian_theory"};
    cli::add_common_flags(app, common, spec);
    study::StudyFlags study_flags;
    study::add_study_flags(app, study_flags);
    app.option("--m", c.m, "robust features (mean ±gamma)").show_default();
    app.option("--d", c.d, "non-robust features (mean ±eta)").show_default();
    app.option("--gamma", c.gamma, "robust feature mean").show_default();
    app.option("--eta", c.eta, "non-robust feature mean, 0 < eta <= eps").show_default();
    app.option("--sigma", c.sigma, "standard deviation of class -1").show_default();
    app.option("--K", c.K, "class +1 has standard deviation K*sigma, K > 1").show_default();
    app.option("--eps", c.eps, "adversarial training radius (L-inf), eta <= eps < gamma").show_default();
    app.option("--eps0", c.eps0, "test radius (L-inf) of the robust errors, >= 0").show_default();
    app.option("--k-sweep", c.k_sweep, "K values, comma-separated (eps, eps0 fixed)").show_default();
    app.option("--eps-sweep", c.eps_sweep, "training radii, comma-separated (K and the test radius eps0 fixed)").show_default();
    app.option("--samples", c.samples, "training samples per model").show_default();
    app.option("--test-samples", c.test_samples, "test samples per K (results.json, records.csv)").show_default();
    app.option("--batch-size", c.batch_size, "SGD batch size").positive().show_default();
    app.option("--loss", c.loss, "training loss: sigmoid (smoothed 0-1 error, the paper's objective) or logistic")
        .one_of({"sigmoid", "logistic"}).show_default();
    app.option("--lr", c.lr, "peak learning rate of the weights (SGD, momentum 0.9, cosine to 0)").positive().show_default();
    app.option("--bias-lr", c.bias_lr, "peak learning rate of the bias (Adam, cosine to 0)").positive().show_default();
    if (const int code = cli::parse(app, argc, argv, common, spec, std::cout, std::cerr); code >= 0) return code;
    return cli::run_guarded("gaussian_theory", [&] {
        if (common.out.empty()) throw std::invalid_argument("--out: an output folder is required");
        protocols::check_config(c);
        resolve_device(common.device, false);   // a bad --device fails before any job
        return study::run_study(gaussian_study(c, common), common, std::cout, study_flags);
    });
}
