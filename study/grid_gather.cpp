#include "study/grid_gather.h"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "report/run_data.h"
#include "study/study.h"
#include "util/atomic_file.h"
#include "util/split_list.h"

namespace cw::study {

namespace fs = std::filesystem;

GatheredGrid gather_grid(const Grid& grid, const train::JobConfig& defaults, const std::vector<std::string>& extra,
                const std::string& source, const std::string& out) {
    GatheredGrid g;
    g.settings.resize(grid.settings.size());
    g.dirs.resize(grid.settings.size());
    for (const GridCell& c : grid_cells(grid)) {
        const train::JobConfig job = cell_job(grid, c, defaults, extra, source);
        SettingRuns& s = g.settings[c.setting];
        s.name = grid.settings[c.setting].name;
        s.method = job.method;
        s.group = job.data.dataset + (job.data.classes == "all" ? "" : " " + job.data.classes);
        s.pair_key = s.group + " | " + flags_without_method(grid.settings[c.setting]);
        const fs::path dir = fs::path(out) / c.name;
        const fs::path error_file = dir / "job_error.txt";
        if (!arm_finished(arm(c.name, job, job.method), dir.string())) {
            std::string state = fs::exists(error_file) ? "failed: " + util::read_file_text(error_file.string())
                                : fs::exists(dir)      ? "unfinished"
                                                       : "missing";
            state.erase(std::remove(state.begin(), state.end(), '\n'), state.end());
            g.cells.push_back({c.name, state});
            continue;
        }
        // One checkpoint and one attack for the whole summary: the first finished cell's choice. A cell audited
        // otherwise (other --final-checkpoints or --final-attacks in its setting) is listed, not mixed in.
        if (g.checkpoint.empty()) {
            const auto checkpoints = util::split_list(job.final_checkpoints);
            g.checkpoint = std::find(checkpoints.begin(), checkpoints.end(), "last") != checkpoints.end()
                               ? "last" : checkpoints.front();
            const auto attacks = util::split_list(job.final_attacks);
            g.attack = attacks.empty() ? "" : attacks.front();
        }
        const fs::path results = dir / ("eval_" + g.checkpoint) / "results.json";
        if (!fs::exists(results)) {
            g.cells.push_back({c.name, "failed: no eval_" + g.checkpoint + "/results.json (the summary compares checkpoint " +
                                           g.checkpoint + ", the first finished cell's)"});
            continue;
        }
        const nlohmann::json r = report::load_results_json(results.string());
        const nlohmann::json* clean = report::find_evaluation(r, "clean");
        const nlohmann::json* robust = g.attack.empty() ? nullptr : report::find_evaluation(r, g.attack);
        if (!clean || (!g.attack.empty() && !robust)) {
            g.cells.push_back({c.name, "failed: its results.json has no " + std::string(clean ? g.attack : "clean") +
                                           " evaluation"});
            continue;
        }
        const auto classes = r.at("classes").get<std::vector<std::string>>();
        if (!s.classes.empty() && s.classes != classes) {
            g.cells.push_back({c.name, "failed: its classes differ from the setting's other seeds"});
            continue;
        }
        s.classes = classes;
        s.seeds.push_back(grid.seeds[c.seed]);
        s.clean.push_back(report::per_class_values(*clean, "per_class_accuracy"));
        s.robust.push_back(robust ? report::per_class_values(*robust, "per_class_accuracy")
                                  : std::vector<double>(classes.size(), NAN));
        g.dirs[c.setting].push_back(dir.string());
        g.cells.push_back({c.name, "finished"});
    }
    return g;
}

std::map<std::string, std::vector<const SettingRuns*>> by_class_set(const GatheredGrid& g, std::vector<std::string>& order) {
    std::map<std::string, std::vector<const SettingRuns*>> groups;
    for (const SettingRuns& s : g.settings) {
        if (s.clean.empty()) continue;
        if (!groups.count(s.group)) order.push_back(s.group);
        groups[s.group].push_back(&s);
    }
    return groups;
}

}  // namespace cw::study
