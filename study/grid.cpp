#include "study/grid.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "nn/model_registry.h"
#include "jobs/registry.h"
#include "util/flags.h"
#include "util/format.h"

namespace cw::study {

std::vector<std::string> split_flags(const std::string& text) {
    std::istringstream in(text);
    std::vector<std::string> tokens;
    for (std::string t; in >> t;) tokens.push_back(t);
    return tokens;
}

void apply_train_flags(train::JobConfig& job, const std::vector<std::string>& flags) {
    cli::FlagSet app{"grid cell"};
    // Base, setting and command line may each give a flag: the later one wins.
    app.repeated_flags_take_last();
    train::add_job_flags(app, job);
    app.option("--epochs", job.common.epochs, "training epochs").range(int64_t{1}, int64_t{1000000});
    app.parse(std::vector<std::string>(flags.rbegin(), flags.rend()));   // a FlagError is an invalid_argument
    // The job checks these only when it starts; a grid should fail before its first cell trains.
    const auto& methods = train::method_names();
    if (std::find(methods.begin(), methods.end(), job.method) == methods.end())
        throw std::invalid_argument("--method: unknown method '" + job.method + "'");
    if (!job.arch.empty() && !nn::is_model_name(job.arch))
        throw std::invalid_argument("--arch: unknown architecture '" + job.arch + "'");
}

namespace {

std::vector<std::string> flag_list(const nlohmann::json& v, const std::string& where) {
    if (v.is_string()) return split_flags(v.get<std::string>());
    if (!v.is_array()) throw std::invalid_argument(where + ": flags must be a string or a list of strings");
    std::vector<std::string> out;
    for (const auto& t : v) {
        if (!t.is_string()) throw std::invalid_argument(where + ": flags must be a string or a list of strings");
        for (const std::string& s : split_flags(t.get<std::string>())) out.push_back(s);
    }
    return out;
}

bool folder_safe(const std::string& name) {
    if (name.empty() || name == "." || name == "..") return false;
    return name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-") ==
           std::string::npos;
}

std::string join(const std::vector<std::string>& tokens) {
    std::string s;
    for (const std::string& t : tokens) s += (s.empty() ? "" : " ") + t;
    return s;
}

}  // namespace

Grid grid_from_json(const nlohmann::json& j, const std::string& source) {
    const std::string where = "grid '" + source + "'";
    if (!j.is_object()) throw std::invalid_argument(where + ": expected a JSON object with title, seeds, base, settings");
    for (const auto& [key, value] : j.items())
        if (key != "title" && key != "seeds" && key != "base" && key != "settings")
            throw std::invalid_argument(where + ": unknown key '" + key + "' (known: title, seeds, base, settings)");
    Grid g;
    g.title = j.value("title", std::string("grid"));
    if (!j.contains("seeds") || !j.at("seeds").is_array() || j.at("seeds").empty())
        throw std::invalid_argument(where + ": 'seeds' must be a non-empty list of whole numbers");
    std::set<uint64_t> seen_seeds;
    for (const auto& s : j.at("seeds")) {
        if (!s.is_number_integer() || s.get<int64_t>() < 0) throw std::invalid_argument(where + ": seed " + s.dump() + " is not a whole number ≥ 0");
        if (!seen_seeds.insert(s.get<uint64_t>()).second)
            throw std::invalid_argument(where + ": seed " + s.dump() + " is listed twice");
        g.seeds.push_back(s.get<uint64_t>());
    }
    if (j.contains("base")) g.base_flags = flag_list(j.at("base"), where + ": base");
    if (!j.contains("settings") || !j.at("settings").is_array() || j.at("settings").empty())
        throw std::invalid_argument(where + ": 'settings' must be a non-empty list of {name, flags}");
    std::set<std::string> names;
    for (const auto& s : j.at("settings")) {
        if (!s.is_object() || !s.contains("name") || !s.at("name").is_string())
            throw std::invalid_argument(where + ": every setting needs a \"name\" (got " + s.dump() + ")");
        GridSetting setting;
        setting.name = s.at("name").get<std::string>();
        const std::string swhere = where + ": setting '" + setting.name + "'";
        if (!folder_safe(setting.name))
            throw std::invalid_argument(swhere + ": a name is a folder name: letters, digits, '.', '_', '+', '-'");
        if (!names.insert(setting.name).second) throw std::invalid_argument(swhere + ": the name is used twice");
        for (const auto& [key, value] : s.items())
            if (key != "name" && key != "flags") throw std::invalid_argument(swhere + ": unknown key '" + key + "'");
        if (s.contains("flags")) setting.flags = flag_list(s.at("flags"), swhere);
        g.settings.push_back(setting);
    }
    // Every setting's flags are checked now: a typo fails the grid before a cell has trained, not hours in.
    const train::JobConfig defaults;
    for (const GridCell& c : grid_cells(g))
        if (c.seed == 0) cell_job(g, c, defaults, {}, source);
    return g;
}

nlohmann::json grid_to_json(const Grid& g) {
    nlohmann::json settings = nlohmann::json::array();
    for (const GridSetting& s : g.settings) settings.push_back({{"name", s.name}, {"flags", join(s.flags)}});
    return {{"title", g.title}, {"seeds", g.seeds}, {"base", join(g.base_flags)}, {"settings", settings}};
}

std::vector<GridCell> grid_cells(const Grid& g) {
    std::vector<GridCell> cells;
    for (size_t k = 0; k < g.seeds.size(); ++k)
        for (size_t s = 0; s < g.settings.size(); ++s) {
            GridCell c;
            c.index = static_cast<int>(cells.size());
            c.setting = s;
            c.seed = k;
            c.name = g.settings[s].name + "/seed" + std::to_string(g.seeds[k]);
            cells.push_back(c);
        }
    return cells;
}

train::JobConfig cell_job(const Grid& g, const GridCell& cell, const train::JobConfig& defaults,
                          const std::vector<std::string>& extra_flags, const std::string& source) {
    const GridSetting& s = g.settings.at(cell.setting);
    std::vector<std::string> flags = g.base_flags;
    flags.insert(flags.end(), s.flags.begin(), s.flags.end());
    flags.insert(flags.end(), extra_flags.begin(), extra_flags.end());
    train::JobConfig job = defaults;
    try {
        apply_train_flags(job, flags);
    } catch (const std::exception& e) {
        throw std::invalid_argument("grid '" + source + "': setting '" + s.name + "': " + e.what());
    }
    job.common.seed = defaults.common.seed + g.seeds.at(cell.seed);
    return job;
}

std::string flags_without_method(const GridSetting& s) {
    std::vector<std::string> kept;
    for (size_t i = 0; i < s.flags.size(); ++i) {
        if (s.flags[i] == "--method") {
            ++i;
            continue;
        }
        if (s.flags[i].rfind("--method=", 0) == 0) continue;
        kept.push_back(s.flags[i]);
    }
    return join(kept);
}

Grid load_grid(const std::string& spec) {
    if (spec == "paper") return paper_grid();
    if (spec == "quick") return quick_grid();
    if (spec == "cpu") return cpu_grid();
    if (!std::filesystem::is_regular_file(spec))
        throw std::invalid_argument("--grid: '" + spec + "' is neither paper, quick, cpu nor a JSON file");
    std::ifstream in(spec);
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(in);
    } catch (const nlohmann::json::parse_error& e) {
        throw std::invalid_argument("grid '" + spec + "': not valid JSON: " + util::one_line(e.what()));
    }
    return grid_from_json(j, spec);
}

}  // namespace cw::study
