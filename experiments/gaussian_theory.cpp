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
//   3. Write theory.csv (and print it), models/<name>/results.json and records.csv per trained model (the "fgsm"
//      evaluation is the exact worst case), report.html with the figures.
//
//   ./experiments/gaussian_theory [--quick] [--K 2] [--eps 0.5] [--eps0 0.5] [--d 1000] [--samples 20000] ...
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "cli/common_flags.h"
#include "datasets/gaussian_mixture.h"
#include "util/atomic_file.h"
#include "eval/results_json.h"
#include "datasets/gaussian_comparison.h"
#include "report/gaussian_page.h"
#include "report/gnuplot.h"
#include "train/gaussian_linear.h"
#include "util/split_list.h"

using namespace cw;
namespace fs = std::filesystem;

namespace {

// ---- the configuration: FRL states no numbers; these are the headline example G1 (§5) -------------
struct Config {
    int m = 10;                 // robust features, mean ±γ
    int d = 1000;               // non-robust features, mean ±η; d ≫ m
    double gamma = 1.0;
    double eta = 0.1;
    double sigma = 1.0;         // standard deviation of class -1
    double K = 2.0;             // class +1 has standard deviation K·σ, K > 1
    double eps = 0.5;           // adversarial training radius, η <= ε < γ
    double eps0 = 0.5;          // L∞ radius of the robust errors
    std::string k_sweep = "1.25,1.5,2,3,4";
    // Training radii; every model is tested at ε₀. Stops short of γ: near it the attack wins on almost every
    // sample, the sigmoid loss goes flat and the trained model keeps non-robust weights (--loss logistic trains
    // there).
    std::string eps_sweep = "0.1,0.3,0.5,0.7";
    int64_t samples = 20000;    // training samples per model (≫ m + d, so the weights are estimated, not memorised)
    int64_t test_samples = 10000;
    std::string loss = "sigmoid";
    int64_t batch_size = 128;
    double lr = 0.05;           // weights: SGD (momentum 0.9), cosine to 0; epochs: --epochs
    double bias_lr = 0.01;      // bias: Adam, same schedule
};
constexpr int64_t kDefaultEpochs = 20;

fairness::GaussianTheoryParams base_params(const Config& c) {
    return {{c.m, c.d, c.gamma, c.eta, c.sigma, c.K}, c.eps, c.eps0};
}

// The one place that says what a sweep point means.
fairness::GaussianTheoryParams sweep_point(const Config& c, const std::string& sweep, double x) {
    fairness::GaussianTheoryParams p = base_params(c);
    // The test radius ε₀ stays fixed: the eps sweep asks how the training radius changes the errors under one
    // threat model (and shows ε₀ != ε at its other points).
    if (sweep == "K") p.data.K = x;
    else p.eps = x;
    return p;
}

std::vector<double> parse_sweep(const std::string& flag, const std::string& text) {
    std::vector<double> values;
    for (const std::string& item : util::split_list(text)) {
        size_t used = 0;
        double v = 0;
        try {
            v = std::stod(item, &used);
        } catch (const std::exception&) {
        }
        if (used != item.size() || used == 0) throw std::invalid_argument(flag + ": '" + item + "' is not a number");
        values.push_back(v);
    }
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    return values;
}

std::string tag(double v) {
    std::ostringstream os;
    os << v;
    return os.str();
}

// Same seed and K: same samples, whichever sweep asks for them.
uint64_t data_seed(uint64_t seed, double K) {
    uint64_t bits = 0;
    std::memcpy(&bits, &K, sizeof bits);
    return seed ^ (bits * 0x9E3779B97F4A7C15ull);
}

struct Trained {
    fairness::LinearClassifier model;
    std::string name;
};

// Trains one model, writes models/<name>/{model.json, results.json, records.csv}.
Trained train_and_write(const std::string& name, const fairness::GaussianTheoryParams& p, bool adversarial,
                        const data::GaussianSamples& train, const data::GaussianSamples& test, const Config& c,
                        const cli::CommonFlags& common, Device device, std::ostream& out) {
    train::LinearTrainOptions o;
    o.adversarial = adversarial;
    o.eps = p.eps;
    o.loss = train::parse_linear_loss(c.loss);
    o.bias_lr = c.bias_lr;
    o.epochs = common.epochs;
    o.batch_size = c.batch_size;
    o.lr = c.lr;
    o.seed = common.seed;
    o.device = device;
    const train::LinearTrainResult r = train::train_linear(train, o);
    const fairness::LinearSummary optimum = adversarial ? fairness::adversarial_optimum(p) : fairness::natural_optimum(p);
    const fairness::LinearSummary own = fairness::summarise(r.model, p.data);
    const double ratio = fairness::nonrobust_weight_ratio(r.model, p.data.m);
    out << "  " << name << ": " << o.epochs << " epochs in " << std::fixed << std::setprecision(1) << r.seconds
        << " s, final loss " << std::setprecision(4) << r.epoch_loss.back() << ", weight ratio " << std::setprecision(3)
        << ratio << std::defaultfloat << "\n";

    const fs::path dir = fs::path(common.out) / "models" / name;
    const auto t0 = std::chrono::steady_clock::now();
    const eval::EvalRecords records = train::linear_records(r.model, test, p.eps0, "fgsm");
    eval::RunInfo info;
    info.experiment = "gaussian_theory";
    info.dataset = "gaussian_mixture";
    info.split = "test";
    info.arch = "linear";
    info.checkpoint = (dir / "model.json").string();
    info.method = adversarial ? "adversarial_exact_linf" : "natural";
    info.device = device.str();
    info.seed = common.seed;
    info.classes = {"-1", "+1"};
    eval::AttackSummary attack;
    attack.name = "fgsm";
    attack.config = {{"type", "fgsm"}, {"norm", "linf"}, {"eps", p.eps0}, {"steps", 1}, {"restarts", 1},
                     {"random_start", false}, {"targeted", false},
                     {"note", "exact worst case for a linear model: delta = -y * eps * sign(w)"}};
    attack.time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    nlohmann::json results = eval::results_json(info, records, {attack});
    const fairness::ClassErrors clean = fairness::classwise_errors(p.data, own, 0), rob = fairness::classwise_errors(p.data, own, p.eps0);
    const fairness::ClassErrors oclean = fairness::classwise_errors(p.data, optimum, 0), orob = fairness::classwise_errors(p.data, optimum, p.eps0);
    results["gaussian"] = {{"m", p.data.m}, {"d", p.data.d}, {"gamma", p.data.gamma}, {"eta", p.data.eta},
                           {"sigma", p.data.sigma}, {"K", p.data.K}, {"eps_train", p.eps}, {"eps0", p.eps0},
                           {"exact_clean_error", clean.error}, {"exact_robust_error", rob.error},
                           {"optimum_clean_error", oclean.error}, {"optimum_robust_error", orob.error},
                           {"weight_ratio", ratio}, {"weight_ratio_optimum", adversarial ? 0.0 : p.data.eta / p.data.gamma}};
    util::write_file_atomic((dir / "results.json").string(), results.dump(2) + "\n");
    util::write_file_atomic((dir / "records.csv").string(), eval::records_csv(records));
    const nlohmann::json model = {{"w", r.model.w}, {"b", r.model.b}, {"epoch_loss", r.epoch_loss}, {"seconds", r.seconds},
                                  {"adversarial", adversarial}, {"eps", p.eps}, {"loss", c.loss},
                                  {"epochs", o.epochs}, {"lr", o.lr}, {"bias_lr", o.bias_lr},
                                  {"batch_size", o.batch_size}, {"samples", train.n}};
    util::write_file_atomic((dir / "model.json").string(), model.dump() + "\n");
    return {r.model, name};
}

void print_theory(const fairness::GaussianTheoryParams& p, std::ostream& out) {
    const fairness::GaussianConstants k = fairness::constants(p);
    const fairness::TheoremErrors nat = fairness::theorem1(p), adv = fairness::theorem2(p);
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

int run(const Config& c, const cli::CommonFlags& common, std::ostream& out) {
    if (common.out.empty()) throw std::invalid_argument("--out: an output folder is required");
    const std::map<std::string, std::vector<double>> sweeps = {{"K", parse_sweep("--k-sweep", c.k_sweep)},
                                                               {"eps", parse_sweep("--eps-sweep", c.eps_sweep)}};
    fairness::check_admissible(base_params(c));
    for (const auto& [sweep, xs] : sweeps)
        for (double x : xs) try {
                fairness::check_admissible(sweep_point(c, sweep, x));
            } catch (const std::invalid_argument& e) {
                throw std::invalid_argument("--" + std::string(sweep == "K" ? "k" : "eps") + "-sweep " + tag(x) + ": " + e.what());
            }
    if (c.samples < 1 || c.test_samples < 1) throw std::invalid_argument("--samples and --test-samples must be >= 1");
    const Device device = resolve_device(common.device);
    // A run rewrites everything; models or figures left from an earlier run with other sweeps would sit beside the
    // new ones looking current.
    fs::remove_all(fs::path(common.out) / "models");
    fs::remove_all(fs::path(common.out) / "figures");
    fs::create_directories(common.out);

    // 1. Theory at the configuration.
    print_theory(base_params(c), out);

    // 2. Train. Work goes K by K: one data set per K serves its natural model and every adversarial one.
    std::map<double, std::set<double>> adversarial_eps;   // K -> the training radii needed there
    for (double K : sweeps.at("K")) adversarial_eps[K].insert(c.eps);
    for (double e : sweeps.at("eps")) adversarial_eps[c.K].insert(e);
    std::map<double, Trained> natural;                     // K -> f
    std::map<std::pair<double, double>, Trained> robust;   // (K, eps) -> f_adv
    std::vector<std::string> files = {"theory.csv", "config.json"};
    for (const auto& [K, radii] : adversarial_eps) {
        fairness::GaussianTheoryParams p = sweep_point(c, "K", K);
        Rng rng(data_seed(common.seed, K));
        const data::GaussianSamples train = data::sample_gaussian_mixture(p.data, c.samples, rng);
        const data::GaussianSamples test = data::sample_gaussian_mixture(p.data, c.test_samples, rng);
        out << "K=" << K << ": " << train.n << " training and " << test.n << " test samples of dimension " << train.dim << "\n";
        const std::string nat_name = "K" + tag(K) + "_natural";
        natural[K] = train_and_write(nat_name, p, false, train, test, c, common, device, out);
        files.push_back("models/" + nat_name + "/results.json");
        for (double e : radii) {
            p.eps = e;
            const std::string name = "K" + tag(K) + "_eps" + tag(e) + "_adversarial";
            robust[{K, e}] = train_and_write(name, p, true, train, test, c, common, device, out);
            files.push_back("models/" + name + "/results.json");
        }
    }

    // 3. Compare, write, print.
    std::vector<fairness::GaussianComparison> rows;
    std::vector<report::GaussianSweepPlot> plots;
    for (const auto& [sweep, xs] : sweeps) {
        if (xs.empty()) continue;
        report::GaussianSweepPlot plot;
        plot.name = sweep;
        plot.xlabel = sweep == "K" ? "K (class +1 standard deviation / class -1)" : "eps (adversarial training radius; test radius eps0 fixed)";
        for (double x : xs) {
            const fairness::GaussianTheoryParams p = sweep_point(c, sweep, x);
            const double K = p.data.K;
            plot.rows.push_back(fairness::compare(sweep, p, natural.at(K).model, robust.at({K, p.eps}).model));
            plot.rows_x.push_back(x);
        }
        const int n = 60;
        for (int i = 0; i <= n; ++i) {
            const double x = xs.front() + (xs.back() - xs.front()) * i / n;
            plot.dense_x.push_back(x);
            plot.dense.push_back(sweep_point(c, sweep, x));
        }
        rows.insert(rows.end(), plot.rows.begin(), plot.rows.end());
        plots.push_back(plot);
    }
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
    page.files = files;
    const bool figures = report::gnuplot_available();
    if (!figures) out << "warning: gnuplot not found (scripts/setup_debian.sh installs gnuplot-nox): no figures\n";
    out << "wrote " << (fs::path(common.out) / "theory.csv").string() << " and "
        << report::write_gaussian_page(page, common.out, figures) << "\n";
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    Config c;
    cli::CommonFlags common;
    common.out = "runs/gaussian_theory";
    common.epochs = kDefaultEpochs;
    cli::CommonSpec spec;
    spec.program = "gaussian_theory";
    spec.epochs_help = "training epochs of each linear model";
    spec.resume_help = "accepted for scripts; a run is recomputed from scratch (it takes about 20 s), nothing is resumed";
    spec.quick_preset = {{"--samples", "8000"},   {"--test-samples", "2000"}, {"--epochs", "10"},
                         {"--k-sweep", "1.5,2,3"}, {"--eps-sweep", "0.1,0.5,0.7"}, {"--out", "runs/gaussian_theory_quick"}};
    spec.quick_what = "the same protocol with fewer samples, epochs and sweep points, seconds on two cores";
    CLI::App app{"FRL §3's Gaussian example: class-wise errors of the optimal and of trained linear classifiers, "
                 "natural and adversarial (no data files: --data-dir is not used)", "gaussian_theory"};
    cli::add_common_flags(app, common, spec);
    app.add_option("--m", c.m, "robust features (mean ±gamma)")->capture_default_str();
    app.add_option("--d", c.d, "non-robust features (mean ±eta)")->capture_default_str();
    app.add_option("--gamma", c.gamma, "robust feature mean")->capture_default_str();
    app.add_option("--eta", c.eta, "non-robust feature mean, 0 < eta <= eps")->capture_default_str();
    app.add_option("--sigma", c.sigma, "standard deviation of class -1")->capture_default_str();
    app.add_option("--K", c.K, "class +1 has standard deviation K*sigma, K > 1")->capture_default_str();
    app.add_option("--eps", c.eps, "adversarial training radius (L-inf), eta <= eps < gamma")->capture_default_str();
    app.add_option("--eps0", c.eps0, "test radius (L-inf) of the robust errors, >= 0")->capture_default_str();
    app.add_option("--k-sweep", c.k_sweep, "K values, comma-separated (eps, eps0 fixed)")->capture_default_str();
    app.add_option("--eps-sweep", c.eps_sweep, "training radii, comma-separated (K and the test radius eps0 fixed)")->capture_default_str();
    app.add_option("--samples", c.samples, "training samples per model")->capture_default_str();
    app.add_option("--test-samples", c.test_samples, "test samples per K (results.json, records.csv)")->capture_default_str();
    app.add_option("--batch-size", c.batch_size, "SGD batch size")->check(CLI::PositiveNumber)->capture_default_str();
    app.add_option("--loss", c.loss, "training loss: sigmoid (smoothed 0-1 error, the paper's objective) or logistic")
        ->check(CLI::IsMember({"sigmoid", "logistic"}))->capture_default_str();
    app.add_option("--lr", c.lr, "peak learning rate of the weights (SGD, momentum 0.9, cosine to 0)")->check(CLI::PositiveNumber)->capture_default_str();
    app.add_option("--bias-lr", c.bias_lr, "peak learning rate of the bias (Adam, cosine to 0)")->check(CLI::PositiveNumber)->capture_default_str();
    if (const int code = cli::parse(app, argc, argv, common, spec, std::cout, std::cerr); code >= 0) return code;
    return cli::run_guarded("gaussian_theory", [&] { return run(c, common, std::cout); });
}
