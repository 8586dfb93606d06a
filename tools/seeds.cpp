// seeds: one table over several runs of the same configuration (seeds): per-class accuracy, overall, worst class
// and spread as mean ± std (sample std over the runs), for the clean evaluation and every attack, from each run's
// results.json. Markdown on stdout (and <out>/seeds.md + seeds.json with --out).
//
//   build/tools/seeds runs/fmnist_pgd_s0/eval_last runs/fmnist_pgd_s1/eval_last runs/fmnist_pgd_s2/eval_last
#include <CLI/CLI.hpp>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/common_flags.h"
#include "util/atomic_file.h"

namespace {

using nlohmann::json;

struct MeanStd {
    double mean = 0, std = 0;
};

MeanStd mean_std(const std::vector<double>& v) {
    MeanStd m;
    if (v.empty()) return m;
    for (double x : v) m.mean += x;
    m.mean /= static_cast<double>(v.size());
    if (v.size() > 1) {
        double ss = 0;
        for (double x : v) ss += (x - m.mean) * (x - m.mean);
        m.std = std::sqrt(ss / static_cast<double>(v.size() - 1));
    }
    return m;
}

std::string pct(const MeanStd& m) {
    std::ostringstream s;
    s.setf(std::ios::fixed);
    s.precision(1);
    s << 100 * m.mean << " ± " << 100 * m.std;
    return s.str();
}

json load(const std::string& where) {
    std::filesystem::path p(where);
    if (std::filesystem::is_directory(p)) p /= "results.json";
    json j;
    try {
        j = json::parse(cw::util::read_file_text(p.string()));
    } catch (const json::exception& e) {
        throw std::runtime_error(p.string() + ": not a results.json (" + e.what() + ")");
    }
    if (!j.contains("evaluations") || !j.contains("classes"))
        throw std::runtime_error(p.string() + ": not a results.json (no evaluations / classes)");
    return j;
}

}  // namespace

int main(int argc, char** argv) {
    using namespace cw;
    std::vector<std::string> runs;
    cli::CommonFlags common;
    common.out = "";
    cli::CommonSpec spec;
    spec.program = "seeds";
    spec.epochs_help = "accepted for a uniform command line; ignored";
    spec.resume_help = "accepted for a uniform command line; ignored";
    CLI::App app{"Mean ± std over runs (seeds) of per-class, overall, worst-class accuracy and spread", "seeds"};
    cli::add_common_flags(app, common, spec);
    app.add_option("runs", runs, "results.json files or the folders holding them (one per seed)");
    if (const int code = cli::parse(app, argc, argv, common, spec, std::cout, std::cerr); code >= 0) return code;
    return cli::run_guarded("seeds", [&] {
        if (runs.empty()) throw std::invalid_argument("runs: give at least one results.json or folder");
        std::vector<json> results;
        for (const auto& r : runs) results.push_back(load(r));
        const auto classes = results.front()["classes"].get<std::vector<std::string>>();
        for (size_t i = 1; i < results.size(); ++i)
            if (results[i]["classes"].get<std::vector<std::string>>() != classes)
                throw std::runtime_error(runs[i] + ": its classes differ from " + runs[0] + "'s");
        std::ostringstream md;
        json summary = json::object();
        md << "| evaluation | overall | worst class | spread |";
        for (const auto& c : classes) md << " " << c << " |";
        md << "\n|---|---|---|---|";
        for (size_t k = 0; k < classes.size(); ++k) md << "---|";
        md << "\n";
        for (const auto& ev : results.front()["evaluations"]) {
            const std::string name = ev["name"];
            std::vector<double> overall, worst, spread;
            std::vector<std::vector<double>> per_class(classes.size());
            for (size_t r = 0; r < results.size(); ++r) {
                const json* found = nullptr;
                for (const auto& e : results[r]["evaluations"])
                    if (e["name"] == name) found = &e;
                if (!found) throw std::runtime_error(runs[r] + ": no evaluation '" + name + "'");
                const auto acc = (*found)["per_class_accuracy"].get<std::vector<double>>();
                overall.push_back((*found)["accuracy"].get<double>());
                double lo = 1, hi = 0;
                for (size_t k = 0; k < acc.size(); ++k) {
                    per_class[k].push_back(acc[k]);
                    lo = std::min(lo, acc[k]);
                    hi = std::max(hi, acc[k]);
                }
                worst.push_back(lo);
                spread.push_back(hi - lo);
            }
            md << "| " << name << " | " << pct(mean_std(overall)) << " | " << pct(mean_std(worst)) << " | "
               << pct(mean_std(spread)) << " |";
            json& s = summary[name];
            s["overall"] = {mean_std(overall).mean, mean_std(overall).std};
            s["worst_class"] = {mean_std(worst).mean, mean_std(worst).std};
            s["spread"] = {mean_std(spread).mean, mean_std(spread).std};
            for (size_t k = 0; k < classes.size(); ++k) {
                md << " " << pct(mean_std(per_class[k])) << " |";
                s["per_class"][classes[k]] = {mean_std(per_class[k]).mean, mean_std(per_class[k]).std};
            }
            md << "\n";
        }
        md << "\n" << results.size() << " runs; accuracies in %, mean ± sample std over the runs; worst class and "
           << "spread (best − worst class) are taken per run, then averaged.\n";
        std::cout << md.str();
        if (!common.out.empty()) {
            util::write_file_atomic((std::filesystem::path(common.out) / "seeds.md").string(), md.str());
            summary["runs"] = runs;
            util::write_file_atomic((std::filesystem::path(common.out) / "seeds.json").string(), summary.dump(2) + "\n");
        }
        return 0;
    });
}
