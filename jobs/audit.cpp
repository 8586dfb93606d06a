#include "jobs/audit.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "cli/common_flags.h"
#include "eval/corruption_eval.h"
#include "eval/corruption_set.h"
#include "eval/evaluator.h"
#include "report/run_page.h"
#include "attacks/registry.h"
#include "datasets/batch.h"
#include "datasets/dataset.h"
#include "datasets/registry.h"
#include "jobs/job.h"
#include "nn/checkpoint.h"
#include "train/stop_signal.h"
#include "util/flags.h"
#include "util/format.h"
#include "util/split_list.h"
#include "util/parse_number.h"

namespace cw::eval {

float parse_fraction(const std::string& flag, const std::string& text) {
    auto number = [&](const std::string& s) {
        const std::optional<double> v = util::whole_double(s);
        if (!v || !std::isfinite(*v))
            throw std::invalid_argument(flag + ": expected a number or a fraction like 8/255, got '" + text + "'");
        return *v;
    };
    const size_t slash = text.find('/');
    const double v = slash == std::string::npos ? number(text) : number(text.substr(0, slash)) / number(text.substr(slash + 1));
    // Images live in [0, 1]: a radius or step beyond 1 is a typo (300/255 for 3/255), never a meaningful setting.
    if (!(v >= 0) || !(v <= 1))
        throw std::invalid_argument(flag + ": must lie in [0, 1] (images are scaled to [0, 1]), got '" + text + "' = " +
                                    std::to_string(v));
    return static_cast<float>(v);
}

namespace {
struct Args {
    std::string arch, weights, dataset, split = "test", data_dir, attacks = "clean,pgd20,autoattack";
    std::string classes = "all";   // the classes the model was trained on: all, or top:K as `train --classes`
    std::string eps = "8/255", alpha = "2/255";
    std::string corruptions, corruption_severities = "1,2,3,4,5";   // empty: no corruption evaluation
    int64_t n = -1, batch_size = 250;
    cli::CommonFlags common;   // --device --data-dir --out --seed --resume --quick --epochs (ignored: nothing trains)
};

// Re-throws any error with the flag it concerns in front, so the one-line message names it.
template <class F>
auto with_flag(const std::string& flag, F f) -> decltype(f()) {
    try {
        return f();
    } catch (const std::exception& e) {
        const std::string what = e.what();
        if (what.rfind("--", 0) == 0) throw;   // already names a flag
        throw std::runtime_error(flag + ": " + what);
    }
}

std::shared_ptr<nn::Module> load_model(const Args& a, const nn::Metadata& md, const data::DatasetInfo& info,
                                       int num_classes) {
    nn::ModelSpec spec;
    if (md.count("arch")) {
        spec = nn::model_spec_from_metadata(md);
        if (!a.arch.empty() && a.arch != spec.arch)
            throw std::runtime_error("--arch: " + a.arch + " disagrees with the checkpoint's arch " + spec.arch);
    } else {
        if (a.arch.empty())
            throw std::runtime_error("--arch: the checkpoint has no architecture metadata; name it with --arch");
        // No metadata: the dataset's geometry, no normalisation (the checkpoint cannot tell us any).
        spec.arch = a.arch;
        spec.config.num_classes = num_classes;
        spec.config.in_channels = info.channels;
        spec.config.input_size = info.height;
    }
    if (spec.config.num_classes != num_classes)
        throw std::runtime_error("--weights: the model has " + std::to_string(spec.config.num_classes) +
                                 " classes, dataset " + info.name +
                                 (a.classes == "all" ? "" : " (--classes " + a.classes + ")") + " has " +
                                 std::to_string(num_classes) +
                                 (a.classes == "all" && spec.config.num_classes < num_classes
                                      ? " (a model trained with --classes top:K needs --classes top:K)" : ""));
    auto model = with_flag("--arch", [&] { return nn::make_model(spec.arch, spec.config); });
    nn::load_model(*model, a.weights);
    return model;
}

// The attacks of --attacks ("clean" is always evaluated and not an attack), built before any loading so that a
// typo fails at once.
std::vector<std::unique_ptr<attacks::Attack>> audit_attacks(const Args& a, float eps, float alpha) {
    attacks::AttackOptions ao;
    ao.eps = eps;
    ao.alpha = alpha;
    std::vector<std::unique_ptr<attacks::Attack>> list;
    for (const std::string& name : util::split_list(a.attacks)) {
        if (name == "clean") continue;
        list.push_back(with_flag("--attacks", [&] { return attacks::make_attack(name, ao); }));
    }
    return list;
}

// The model's input geometry against the dataset's, from the checkpoint's metadata alone (before minutes of
// loading). Another dataset of the same shape (MNIST for a Fashion-MNIST model) is a transfer audit: allowed, and
// said.
void check_model_fits(const Args& a, const nn::Metadata& md, const data::DatasetInfo& info, std::ostream& out) {
    if (md.count("arch")) {
        const nn::ModelSpec spec = with_flag("--weights", [&] { return nn::model_spec_from_metadata(md); });
        const std::string mismatch = nn::input_geometry_mismatch("the " + spec.arch + " model of " + a.weights,
                                                                 spec.config, "the images of dataset " + info.name,
                                                                 info.channels, info.height, info.width);
        if (!mismatch.empty()) throw std::invalid_argument("--dataset: " + mismatch);
    }
    if (md.count("dataset") && md.at("dataset") != info.name)
        out << "note: the model was trained on " << md.at("dataset") << "; this audit uses " << info.name << "\n";
}

EvalOptions audit_options(const Args& a, const nn::Metadata& md, const data::Dataset& dataset, int64_t n,
                          Device device, std::ostream& out) {
    EvalOptions opt;
    opt.out_dir = a.common.out;
    opt.resume = a.common.resume;
    opt.log = &out;
    opt.should_stop = [] { return train::stop_requested() != 0; };
    opt.info.experiment = "audit";
    opt.info.dataset = a.dataset;
    opt.info.split = a.split;
    opt.info.checkpoint = a.weights;
    opt.info.seed = a.common.seed;
    opt.info.command_line = a.common.command_line;
    opt.info.device = device.is_cuda() ? "cuda" : "cpu";
    opt.info.classes = dataset.class_names;
    opt.info.coarse_of = data::coarse_of_fine(dataset);   // empty unless the set has superclasses (CIFAR-100)
    if (!opt.info.coarse_of.empty()) opt.info.coarse_classes = dataset.coarse_class_names;
    opt.run_key = {{"dataset", a.dataset}, {"split", a.split}, {"weights", a.weights}, {"n", n}, {"batch_size", a.batch_size}};
    opt.info.arch = md.count("arch") ? md.at("arch") : a.arch;
    opt.info.method = md.count("method") ? md.at("method") : "unknown";
    return opt;
}

int run(const Args& a, std::ostream& out) {
    const float eps = parse_fraction("--eps", a.eps);
    const float alpha = parse_fraction("--alpha", a.alpha);
    if (a.batch_size < 1) throw std::invalid_argument("--batch-size: must be at least 1");
    if (a.n == 0 || a.n < -1) throw std::invalid_argument("--n: must be positive (or omitted for the whole split)");
    const std::vector<std::unique_ptr<attacks::Attack>> attacks = audit_attacks(a, eps, alpha);
    const std::vector<std::string> corruptions = parse_corruption_list("--corruptions", a.corruptions);
    const std::vector<int> severities = parse_severities("--corruption-severities", a.corruption_severities);
    const Device device = with_flag("--device", [&] { return resolve_device(a.common.device, false); });
    std::string why;
    out << "device: " << device.str()
        << (a.common.device == "auto" && device.is_cpu() && !cuda_available(&why) ? " (auto: no usable GPU: " + why + ")" : "")
        << std::endl;
    const nn::Metadata md = with_flag("--weights", [&] { return nn::read_metadata(a.weights); });
    const data::DatasetInfo& info = with_flag("--dataset", [&]() -> const data::DatasetInfo& {
        return data::dataset_info(a.dataset);
    });
    check_model_fits(a, md, info, out);
    const auto dataset = std::make_shared<data::Dataset>(
        with_flag("--dataset", [&] { return data::load_dataset(a.dataset, a.split, a.common.data_dir); }));
    with_flag("--classes", [&] { train::keep_job_classes("--classes", a.classes, a.dataset, a.common.data_dir, *dataset); });
    auto model = with_flag("--weights", [&] { return load_model(a, md, info, static_cast<int>(dataset->num_classes())); });
    model->to(device);
    model->eval();

    const int64_t n = a.n < 0 ? dataset->size() : std::min<int64_t>(a.n, dataset->size());
    std::vector<int64_t> first_n(static_cast<size_t>(n));   // the first n images, as a job evaluates them
    std::iota(first_n.begin(), first_n.end(), 0);
    const BatchSource source = train::batches_of(dataset, first_n, a.batch_size, device);
    const EvalOptions opt = audit_options(a, md, *dataset, n, device, out);
    out << "audit: " << a.weights << " (" << opt.info.arch << ") on " << a.dataset << "/" << a.split << ", " << n
        << " samples in " << source.num_batches << " batches, eps " << eps << " (" << eps * 255 << "/255)"
        << std::endl;
    std::vector<attacks::Attack*> list;
    for (const auto& at : attacks) {
        at->set_log(&out);   // start lines go with the progress lines
        list.push_back(at.get());
    }
    evaluate(*model, source, list, opt);
    if (const std::string memory = backend(device).memory_summary(); !memory.empty()) out << memory << std::endl;
    out << "wrote " << a.common.out << "/results.json and " << a.common.out << "/records.csv" << std::endl;
    if (!corruptions.empty()) {
        CorruptionEvalOptions co = corruption_options_like(opt, a.common.out + "/corruptions");
        co.corruptions = corruptions;
        co.severities = severities;
        co.data_dir = a.common.data_dir;
        co.batch_size = a.batch_size;
        out << "common corruptions: " << corruptions.size() << " x " << severities.size() << " severities" << std::endl;
        evaluate_corruptions(*model, *dataset, first_n, co);
        out << "wrote " << co.out_dir << "/results.json and " << co.out_dir << "/records.csv" << std::endl;
    }
    if (!opt.out_dir.empty()) report::write_run_page_after_run(opt.out_dir, out);
    return 0;
}
}  // namespace

int audit_main(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
    Args a;
    cli::FlagSet app{"Evaluate a checkpoint under adversarial attacks, class by class", "audit"};
    cli::CommonSpec spec;
    spec.program = "audit";
    spec.epochs_help = "accepted for a uniform command line; audit trains nothing and ignores it";
    spec.resume_help = "continue an interrupted run from --out/eval_state.json";
    spec.quick_preset = {{"--n", "500"}, {"--attacks", "clean,pgd20"}};
    spec.quick_what = "a short audit";
    cli::add_common_flags(app, a.common, spec);
    app.option("--arch", a.arch, "architecture (only for checkpoints without metadata)");
    app.option("--weights", a.weights, "model checkpoint (.safetensors), required");
    app.option("--dataset", a.dataset, "dataset name (mnist, cifar10, ...), required");
    app.option("--split", a.split, "dataset split").show_default();
    app.option("--classes", a.classes,
               "the classes the model was trained on: all, or top:K (the K with the most training images, "
               "relabelled as train --classes top:K does)")
        .show_default();
    app.option("--attacks", a.attacks, "comma-separated: clean,fgsm,pgd20,cw20,apgd-ce,apgd-t,fab-t,square5000,autoattack")
        .show_default();
    app.option("--eps", a.eps, "radius, a fraction like 8/255 or a number").show_default();
    app.option("--alpha", a.alpha, "PGD / CW step size").show_default();
    app.option("--n", a.n, "evaluate the first N samples (default: all)");
    app.option("--corruptions", a.corruptions,
               "also evaluate common corruptions into --out/corruptions/: all (19), benchmark (CIFAR-10-C's 15), "
               "fair-tat (FAIR-TAT's 18) or names, comma-separated (default: none)");
    app.option("--corruption-severities", a.corruption_severities, "severities of --corruptions, e.g. 1,2,3,4,5 or 3")
        .show_default();
    app.option("--batch-size", a.batch_size, "batch size").show_default();
    // Unknown arguments are reported before missing ones: a misspelt flag is the likelier mistake.
    app.allow_extras();
    if (const int code = cli::parse(app, argc, argv, a.common, spec, out, err); code >= 0) return code;
    if (!app.remaining().empty()) {
        err << "audit: unknown argument " << app.remaining().front() << " (see audit --help)\n";
        return 1;
    }
    for (const auto& [flag, value] : {std::pair<const char*, std::string*>{"--weights", &a.weights},
                                      {"--dataset", &a.dataset}, {"--out", &a.common.out}})
        if (value->empty()) {
            err << "audit: " << flag << " is required\n";
            return 1;
        }
    // Ctrl-C or SIGTERM: the evaluation stops after the step in progress with its state saved (a second signal stops
    // it at once; the state of the last finished step is on disk either way).
    train::StopSignalScope signals;
    try {
        return run(a, out);
    } catch (const EvalInterrupted& e) {   // only a signal stops an audit's evaluation early
        if (!train::stop_requested()) {
            err << "audit: " << util::one_line(e.what()) << "\n";
            return 1;
        }
        out << e.what() << " — continue with --resume" << std::endl;
        return train::stop_exit_code();
    } catch (const std::exception& e) {
        err << "audit: " << util::one_line(e.what()) << "\n";
        return 1;
    }
}

}  // namespace cw::eval
