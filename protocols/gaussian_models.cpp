#include "protocols/gaussian_models.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <iomanip>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>

#include "datasets/gaussian_mixture.h"
#include "engine/device.h"
#include "eval/results_json.h"
#include "train/gaussian_linear.h"
#include "util/atomic_file.h"
#include "util/split_list.h"
#include "util/parse_number.h"

namespace cw::protocols {

namespace fs = std::filesystem;

fairness::GaussianTheoryParams base_params(const GaussianConfig& c) {
    return {{c.m, c.d, c.gamma, c.eta, c.sigma, c.K}, c.eps, c.eps0};
}

fairness::GaussianTheoryParams sweep_point(const GaussianConfig& c, const std::string& sweep, double x) {
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
        const std::optional<double> v = util::whole_double(item);
        if (!v) throw std::invalid_argument(flag + ": '" + item + "' is not a number");
        values.push_back(*v);
    }
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    return values;
}

void check_config(const GaussianConfig& c) {
    fairness::check_admissible(base_params(c));
    for (const auto& [sweep, flag, text] : {std::tuple{"K", "--k-sweep", c.k_sweep}, {"eps", "--eps-sweep", c.eps_sweep}})
        for (double x : parse_sweep(flag, text)) try {
                fairness::check_admissible(sweep_point(c, sweep, x));
            } catch (const std::invalid_argument& e) {
                throw std::invalid_argument(std::string(flag) + " " + tag(x) + ": " + e.what());
            }
    if (c.samples < 1 || c.test_samples < 1) throw std::invalid_argument("--samples and --test-samples must be >= 1");
}

std::string tag(double v) {
    std::ostringstream os;
    os << v;
    return os.str();
}

std::string model_name(double K, bool adversarial, double eps) {
    return "K" + tag(K) + (adversarial ? "_eps" + tag(eps) + "_adversarial" : "_natural");
}

std::vector<GaussianModel> gaussian_models(const GaussianConfig& c) {
    std::map<double, std::set<double>> adversarial_eps;   // K -> the training radii needed there
    for (double K : parse_sweep("--k-sweep", c.k_sweep)) adversarial_eps[K].insert(c.eps);
    for (double e : parse_sweep("--eps-sweep", c.eps_sweep)) adversarial_eps[c.K].insert(e);
    std::vector<GaussianModel> models;
    for (const auto& [K, radii] : adversarial_eps) {
        models.push_back({model_name(K, false), K, false, 0});
        for (double e : radii) models.push_back({model_name(K, true, e), K, true, e});
    }
    return models;
}

namespace {

// Same seed and K: same samples, whichever model asks for them.
uint64_t data_seed(uint64_t seed, double K) {
    uint64_t bits = 0;
    std::memcpy(&bits, &K, sizeof bits);
    return seed ^ (bits * 0x9E3779B97F4A7C15ull);
}

int train_and_write(const GaussianConfig& c, const GaussianModel& model, const study::WorkRun& run, std::ostream& out) {
    fairness::GaussianTheoryParams p = sweep_point(c, "K", model.K);
    if (model.adversarial) p.eps = model.eps;
    Rng rng(data_seed(run.seed, model.K));
    const data::GaussianSamples train = data::sample_gaussian_mixture(p.data, c.samples, rng);
    const data::GaussianSamples test = data::sample_gaussian_mixture(p.data, c.test_samples, rng);
    const Device device = resolve_device(run.common.device, false);
    out << "K=" << model.K << ": " << train.n << " training and " << test.n << " test samples of dimension "
        << train.dim << ", on " << device.str() << "\n";

    train::LinearTrainOptions o;
    o.adversarial = model.adversarial;
    o.eps = p.eps;
    o.loss = train::parse_linear_loss(c.loss);
    o.bias_lr = c.bias_lr;
    o.epochs = run.common.epochs;
    o.batch_size = c.batch_size;
    o.lr = c.lr;
    o.seed = run.seed;
    o.device = device;
    const train::LinearTrainResult r = train::train_linear(train, o);
    const fairness::LinearSummary optimum =
        model.adversarial ? fairness::adversarial_optimum(p) : fairness::natural_optimum(p);
    const fairness::LinearSummary own = fairness::summarise(r.model, p.data);
    const double ratio = fairness::nonrobust_weight_ratio(r.model, p.data.m);
    out << "  " << model.name << ": " << o.epochs << " epochs in " << std::fixed << std::setprecision(1) << r.seconds
        << " s, final loss " << std::setprecision(4) << r.epoch_loss.back() << ", weight ratio " << std::setprecision(3)
        << ratio << std::defaultfloat << "\n";

    const fs::path dir = run.dir;
    const auto t0 = std::chrono::steady_clock::now();
    const eval::EvalRecords records = train::linear_records(r.model, test, p.eps0, "fgsm");
    eval::RunInfo info;
    info.experiment = "gaussian_theory";
    info.dataset = "gaussian_mixture";
    info.split = "test";
    info.arch = "linear";
    info.checkpoint = (dir / "model.json").string();
    info.method = model.adversarial ? "adversarial_exact_linf" : "natural";
    info.device = device.str();
    info.seed = run.seed;
    info.classes = {"-1", "+1"};
    eval::AttackSummary attack;
    attack.name = "fgsm";
    attack.config = {{"type", "fgsm"}, {"norm", "linf"}, {"eps", p.eps0}, {"steps", 1}, {"restarts", 1},
                     {"random_start", false}, {"targeted", false},
                     {"note", "exact worst case for a linear model: delta = -y * eps * sign(w)"}};
    attack.time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    nlohmann::json results = eval::results_json(info, records, {attack});
    const fairness::ClassErrors clean = fairness::classwise_errors(p.data, own, 0),
                                rob = fairness::classwise_errors(p.data, own, p.eps0);
    const fairness::ClassErrors oclean = fairness::classwise_errors(p.data, optimum, 0),
                                orob = fairness::classwise_errors(p.data, optimum, p.eps0);
    results["gaussian"] = {{"m", p.data.m}, {"d", p.data.d}, {"gamma", p.data.gamma}, {"eta", p.data.eta},
                           {"sigma", p.data.sigma}, {"K", p.data.K}, {"eps_train", p.eps}, {"eps0", p.eps0},
                           {"exact_clean_error", clean.error}, {"exact_robust_error", rob.error},
                           {"optimum_clean_error", oclean.error}, {"optimum_robust_error", orob.error},
                           {"weight_ratio", ratio},
                           {"weight_ratio_optimum", model.adversarial ? 0.0 : p.data.eta / p.data.gamma}};
    util::write_file_atomic((dir / "results.json").string(), results.dump(2) + "\n");
    util::write_file_atomic((dir / "records.csv").string(), eval::records_csv(records));
    const nlohmann::json written = {{"w", r.model.w}, {"b", r.model.b}, {"epoch_loss", r.epoch_loss},
                                    {"seconds", r.seconds}, {"adversarial", model.adversarial}, {"eps", p.eps},
                                    {"loss", c.loss}, {"epochs", o.epochs}, {"lr", o.lr}, {"bias_lr", o.bias_lr},
                                    {"batch_size", o.batch_size}, {"samples", train.n}, {"seed", run.seed}};
    util::write_file_atomic((dir / "model.json").string(), written.dump() + "\n");
    return 0;
}

}  // namespace

study::Work model_work(const GaussianConfig& c, const GaussianModel& model) {
    study::Work w;
    w.what = model.adversarial ? "linear model, adversarial at eps " + tag(model.eps) : "linear model, natural";
    w.run = [c, model](const study::WorkRun& run, std::ostream& out) { return train_and_write(c, model, run, out); };
    w.finished = [](const std::string& dir) { return fs::exists(fs::path(dir) / "model.json"); };
    return w;
}

fairness::LinearClassifier load_model(const std::string& dir) {
    const std::string file = (fs::path(dir) / "model.json").string();
    const nlohmann::json j = nlohmann::json::parse(util::read_file_text(file));
    return {j.at("w").get<std::vector<double>>(), j.at("b").get<double>()};
}

}  // namespace cw::protocols
