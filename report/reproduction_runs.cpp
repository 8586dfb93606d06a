// See reproduction_runs.h.
#include "report/reproduction_runs.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "util/atomic_file.h"
#include "util/csv.h"
#include "report/run_data.h"

namespace cw::report::reproduction {

namespace fs = std::filesystem;
using nlohmann::json;

double min_of(const std::vector<double>& v) {
    const size_t k = worst_class(v);
    return k < v.size() ? v[k] : NAN;
}
double max_of(const std::vector<double>& v) {
    double best = NAN;
    for (double x : v)
        if (!std::isnan(x) && (std::isnan(best) || x > best)) best = x;
    return best;
}

std::string class_name(const std::vector<std::string>& classes, size_t k) { return k < classes.size() ? classes[k] : "—"; }

size_t worst_class(const std::vector<double>& per_class) {
    size_t worst = per_class.size();
    for (size_t k = 0; k < per_class.size(); ++k)
        if (!std::isnan(per_class[k]) && (worst == per_class.size() || per_class[k] < per_class[worst])) worst = k;
    return worst;
}

namespace {

// One results.json, checked against the contract (report/run_data.h) before any number is read.
std::map<std::string, Eval> load_results(const fs::path& file, std::vector<std::string>& classes,
                                         std::string* device = nullptr) {
    const json j = load_results_json(file.string());
    if (device) *device = j.at("device").is_string() ? j.at("device").get<std::string>() : "";
    const auto names = j.at("classes").get<std::vector<std::string>>();
    if (classes.empty()) classes = names;
    if (names != classes) throw std::runtime_error(file.string() + ": its classes differ from the other runs'");
    std::map<std::string, Eval> out;
    for (const auto& e : j.at("evaluations")) {
        Eval ev;
        ev.overall = e.at("accuracy").is_number() ? e.at("accuracy").get<double>() : NAN;  // null: no samples
        ev.per_class = per_class_values(e, "per_class_accuracy");
        ev.boundary = per_class_values(e, "per_class_boundary_error");
        out[e.at("name").get<std::string>()] = ev;
    }
    return out;
}

// One run's folder: eval_<checkpoint>/results.json, autoattack/results.json, selection.json, cpu.txt,
// hot_start.txt, and hot_start/ and autoattack/model/ (folders of the same kind).
Run load_run(const fs::path& dir, std::vector<std::string>& classes) {
    Run run;
    for (const auto& eval_dir : fs::directory_iterator(dir)) {
        const std::string e = eval_dir.path().filename().string();
        const fs::path file = eval_dir.path() / "results.json";
        if (!fs::is_regular_file(file)) continue;
        if (e.rfind("eval_", 0) == 0) run.evals[e.substr(5)] = load_results(file, classes);
        if (e == "autoattack") run.evals["autoattack"] = load_results(file, classes, &run.autoattack_device);
    }
    const fs::path selection = dir / "selection.json";
    if (!run.evals.empty() && fs::is_regular_file(selection)) {
        try {
            const json j = json::parse(util::read_file_text(selection.string()));
            if (j.contains("fawa")) run.fawa_accepted = j["fawa"].at("accepted").get<int>();
        } catch (const json::exception& e) {
            throw std::runtime_error(selection.string() + ": not a selection.json (" + e.what() + ")");
        }
    }
    if (const fs::path job = dir / "job.json"; !run.evals.empty() && fs::is_regular_file(job)) {
        const json j = json::parse(util::read_file_text(job.string()), nullptr, false);
        if (j.is_discarded() || !j.is_object() || (j.contains("eps") && !j["eps"].is_number()))
            throw std::runtime_error(job.string() + ": expected a JSON object with a number 'eps'");
        if (j.contains("eps")) run.eps = j["eps"].get<double>();
    }
    if (fs::is_regular_file(dir / "cpu.txt")) {
        std::istringstream text(util::read_file_text((dir / "cpu.txt").string()));
        std::getline(text, run.cpu);
    }
    run.from_retrained_hot_start = fs::is_regular_file(dir / "hot_start.txt");
    if (run.from_retrained_hot_start) {
        std::istringstream text(util::read_file_text((dir / "hot_start.txt").string()));
        const std::string key = "checkpoint sha256: ";
        for (std::string line; std::getline(text, line);)
            if (line.rfind(key, 0) == 0) run.hot_start_sha256 = line.substr(key.size());
    }
    if (fs::is_regular_file(dir / "checkpoint.sha256")) {
        std::istringstream text(util::read_file_text((dir / "checkpoint.sha256").string()));
        text >> run.checkpoint_sha256;
    }
    if (fs::is_directory(dir / "hot_start")) {
        Run hot = load_run(dir / "hot_start", classes);
        if (!hot.evals.empty()) run.hot_start = std::make_shared<const Run>(std::move(hot));
    }
    if (fs::is_directory(dir / "autoattack" / "model")) {
        Run attacked = load_run(dir / "autoattack" / "model", classes);
        if (!attacked.evals.empty()) run.autoattack_model = std::make_shared<const Run>(std::move(attacked));
    }
    return run;
}

// seed<k>'s k: the folder names the study writes (scripts/reproduction.sh).
int seed_number(const fs::path& dir) {
    const std::string digits = dir.filename().string().substr(4);
    const bool ok = !digits.empty() && digits.size() <= 6 &&
                    std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return std::isdigit(c); });
    if (!ok) throw std::runtime_error(dir.string() + ": expected a folder seed<k> with k a seed number");
    return std::stoi(digits);
}

}  // namespace

std::map<std::string, Arm> load_arms(const fs::path& dir, std::vector<std::string>& classes) {
    std::map<std::string, Arm> arms;
    if (!fs::is_directory(dir)) return arms;
    for (const auto& arm_dir : fs::directory_iterator(dir)) {
        if (!arm_dir.is_directory()) continue;
        for (const auto& seed_dir : fs::directory_iterator(arm_dir.path())) {
            const std::string name = seed_dir.path().filename().string();
            if (name.rfind("seed", 0) != 0) continue;
            const int seed = seed_number(seed_dir.path());
            Run run = load_run(seed_dir.path(), classes);
            if (!run.evals.empty()) arms[arm_dir.path().filename().string()][seed] = std::move(run);
        }
    }
    return arms;
}

double metric(const Run& run, const std::string& checkpoint, const std::string& name) {
    auto c = run.evals.find(checkpoint);
    if (c == run.evals.end()) return NAN;
    auto eval = [&](const char* which) -> const Eval* {
        auto it = c->second.find(which);
        return it == c->second.end() ? nullptr : &it->second;
    };
    const Eval* clean = eval("clean");
    const Eval* pgd = eval("pgd20");
    if (name == "clean" && clean) return 100 * clean->overall;
    if (name == "clean worst" && clean) return 100 * min_of(clean->per_class);
    if (name == "clean spread" && clean) return 100 * (max_of(clean->per_class) - min_of(clean->per_class));
    if (name == "PGD-20" && pgd) return 100 * pgd->overall;
    if (name == "PGD-20 worst" && pgd) return 100 * min_of(pgd->per_class);
    if (name == "PGD-20 spread" && pgd) return 100 * (max_of(pgd->per_class) - min_of(pgd->per_class));
    if (name == "boundary worst" && pgd) return 100 * max_of(pgd->boundary);
    return NAN;
}

std::string hot_start_arm_of(const std::string& arm) {
    if (arm.rfind("frl_", 0) == 0) return "pgd_at";
    return arm == "faal" ? "trades" : "";
}

const Run* partner(const std::string& arm_name, const Run& run, const std::string& base_name, const Run& base, int seed) {
    if (hot_start_arm_of(arm_name) == base_name) {
        if (!run.from_retrained_hot_start) return &base;
        const std::string record = base_name + "/seed" + std::to_string(seed) + "/hot_start/";
        if (!base.hot_start)
            throw std::runtime_error(arm_name + " seed " + std::to_string(seed) + " started from a retrained hot start "
                                     "(hot_start.txt) but " + record + " has no evaluation");
        // A later machine's retraining replaced the record: it describes another model than this one started from.
        const std::string& recorded = base.hot_start->checkpoint_sha256;
        if (!run.hot_start_sha256.empty() && run.hot_start_sha256 != recorded)
            throw std::runtime_error(arm_name + " seed " + std::to_string(seed) + " started from the retrained model with "
                                     "checkpoint sha256 " + run.hot_start_sha256.substr(0, 12) + " but " + record +
                                     " records " + (recorded.empty() ? "no checksum" : recorded.substr(0, 12)));
        return base.hot_start.get();
    }
    return run.from_retrained_hot_start == base.from_retrained_hot_start ? &base : nullptr;
}

std::string seeds_of(const Arm& arm, bool (*only)(const Run&)) {
    std::string s;
    for (const auto& [seed, run] : arm)
        if (!only || only(run)) s += (s.empty() ? "" : ",") + std::to_string(seed);
    return s;
}

std::string seeds_without_average(const Arm& arm) {
    return seeds_of(arm, [](const Run& run) { return run.fawa_accepted == 0; });
}

std::string seeds_text(const std::string& list) {
    return (list.find(',') == std::string::npos ? "seed " : "seeds ") + list;
}

std::vector<double> per_epoch_test_pgd(const fs::path& history) {
    std::vector<double> per_epoch;
    if (!fs::exists(history)) return per_epoch;
    const std::string name = history.string();
    const util::CsvTable t = util::parse_csv(util::read_file_text(name), name);
    const int eval = t.column("eval"), overall = t.column("overall");
    if (eval < 0 || overall < 0) throw std::runtime_error(name + ": expected the columns eval and overall");
    for (const auto& row : t.rows)
        if (row[eval].rfind("test_pgd", 0) == 0) per_epoch.push_back(100 * util::csv_number(row[overall], name));
    return per_epoch;
}

}  // namespace cw::report::reproduction
