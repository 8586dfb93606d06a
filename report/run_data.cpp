#include "report/run_data.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <stdexcept>

#include "util/atomic_file.h"
#include "eval/results_json.h"

namespace cw::report {

namespace fs = std::filesystem;

const Evaluation* RunData::evaluation(const std::string& checkpoint) const {
    for (const Evaluation& e : evaluations)
        if (checkpoint.empty() || e.checkpoint == checkpoint) return &e;
    return nullptr;
}

std::vector<double> per_class_values(const nlohmann::json& evaluation, const std::string& key) {
    std::vector<double> v;
    if (!evaluation.contains(key)) return v;
    for (const auto& x : evaluation.at(key)) v.push_back(x.is_number() ? x.get<double>() : std::nan(""));
    return v;
}

const nlohmann::json* find_evaluation(const nlohmann::json& results, const std::string& name) {
    for (const auto& e : results.at("evaluations"))
        if (e.at("name") == name) return &e;
    return nullptr;
}

namespace {
void require(bool ok, const std::string& file, const std::string& what) {
    if (!ok) throw std::runtime_error(file + ": not a valid classwise results.json: " + what);
}

void check_evaluation(const nlohmann::json& e, size_t index, size_t C, const std::string& file) {
    const std::string where = "evaluations[" + std::to_string(index) + "]";
    require(e.is_object(), file, where + " is not an object");
    const bool attacked = e.contains("name") && e.at("name") != "clean";
    for (const std::string& f : eval::evaluation_required_fields(attacked))
        require(e.contains(f), file, where + " has no field '" + f + "'");
    require(e.at("name").is_string(), file, where + ".name is not a string");
    require(e.at("accuracy").is_number() || e.at("accuracy").is_null(), file, where + ".accuracy is not a number");
    for (const char* list : {"per_class_accuracy", "cfp", "per_class_boundary_error"}) {
        if (!e.contains(list)) continue;
        const auto& v = e.at(list);
        require(v.is_array() && v.size() == C, file,
                where + "." + list + " should list one number per class (" + std::to_string(C) + ")");
        for (const auto& x : v) require(x.is_number() || x.is_null(), file, where + "." + list + " holds a non-number");
    }
    const auto& m = e.at("confusion");
    require(m.is_array() && m.size() == C, file, where + ".confusion should have one row per class (" +
                                                     std::to_string(C) + ")");
    for (const auto& row : m) {
        require(row.is_array() && row.size() == C, file, where + ".confusion should be " + std::to_string(C) + "x" +
                                                             std::to_string(C));
        for (const auto& x : row) require(x.is_number_integer() && x.get<int64_t>() >= 0, file,
                                          where + ".confusion holds a value that is not a count");
    }
    for (const char* k : {"worst_class", "best_class"})
        require(e.at(k).is_number_integer() && e.at(k).get<int64_t>() >= -1 && e.at(k).get<int64_t>() < int64_t(C),
                file, where + "." + k + " is not a class index");
}
}  // namespace

nlohmann::json load_results_json(const std::string& file) {
    if (!fs::exists(file)) throw std::runtime_error(file + ": no such file (expected a results.json)");
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(util::read_file_text(file));
    } catch (const nlohmann::json::parse_error& e) {
        throw std::runtime_error(file + ": malformed JSON (byte " + std::to_string(e.byte) + "), expected a results.json");
    }
    require(j.is_object(), file, "the top level is not an object");
    for (const std::string& f : eval::results_required_fields()) require(j.contains(f), file, "no field '" + f + "'");
    require(j.at("schema") == "classwise.results/1", file, "schema is not \"classwise.results/1\"");
    require(j.at("classes").is_array() && !j.at("classes").empty(), file, "'classes' is not a list of names");
    for (const auto& c : j.at("classes")) require(c.is_string(), file, "'classes' holds a non-string");
    require(j.at("evaluations").is_array() && !j.at("evaluations").empty(), file, "'evaluations' is empty");
    const size_t C = j.at("classes").size();
    for (size_t i = 0; i < j.at("evaluations").size(); ++i) check_evaluation(j.at("evaluations")[i], i, C, file);
    return j;
}

namespace {
std::optional<util::CsvTable> read_csv_if_present(const fs::path& file) {
    if (!fs::exists(file)) return std::nullopt;
    return util::parse_csv(util::read_file_text(file.string()), file.string());
}

// history.csv's class columns: everything after epoch,eval,overall.
std::vector<std::string> history_classes(const util::CsvTable& h, const std::string& file) {
    if (h.header.size() < 4 || h.header[0] != "epoch" || h.header[1] != "eval" || h.header[2] != "overall")
        throw std::runtime_error(file + ": expected the header epoch,eval,overall,<class names>");
    return {h.header.begin() + 3, h.header.end()};
}
}  // namespace

RunData load_run(const std::string& path) {
    RunData run;
    run.dir = path;
    const fs::path p(path);
    if (!fs::exists(p)) throw std::runtime_error(path + ": no such file or folder (expected a run folder or a results.json)");
    if (fs::is_regular_file(p)) {
        run.name = p.parent_path().filename().string();
        run.evaluations.push_back({"", path, load_results_json(path)});
    } else {
        run.name = fs::absolute(p).lexically_normal().filename().string();
        if (run.name.empty()) run.name = fs::absolute(p).lexically_normal().parent_path().filename().string();
        if (fs::exists(p / "results.json")) run.evaluations.push_back({"", (p / "results.json").string(),
                                                                       load_results_json((p / "results.json").string())});
        std::vector<fs::path> eval_dirs;
        for (const auto& entry : fs::directory_iterator(p))
            if (entry.is_directory() && entry.path().filename().string().rfind("eval_", 0) == 0)
                eval_dirs.push_back(entry.path());
        // last first, then the best checkpoints, as the papers report them
        std::sort(eval_dirs.begin(), eval_dirs.end(), [](const fs::path& a, const fs::path& b) {
            const bool la = a.filename() == "eval_last", lb = b.filename() == "eval_last";
            return la != lb ? la : a.filename() < b.filename();
        });
        // audit --corruptions writes <out>/corruptions/results.json beside the audit's own
        if (fs::exists(p / "results.json") && fs::exists(p / "corruptions" / "results.json"))
            eval_dirs.insert(eval_dirs.begin(), p / "corruptions");
        for (const fs::path& d : eval_dirs) {
            const std::string checkpoint = d.filename() == "corruptions" ? "corruptions" : d.filename().string().substr(5);
            if (fs::exists(d / "results.json"))
                run.evaluations.push_back({checkpoint, (d / "results.json").string(),
                                           load_results_json((d / "results.json").string())});
            else
                run.notes.push_back("the evaluation of '" + checkpoint + "' has not finished (no " +
                                    (d / "results.json").string() + "; rerun with --resume)");
        }
        run.history = read_csv_if_present(p / "history.csv");
        run.steps = read_csv_if_present(p / "steps.csv");
        run.train_log = read_csv_if_present(p / "train_log.csv");
        if (fs::exists(p / "job.json")) {
            try {
                run.job = nlohmann::json::parse(util::read_file_text((p / "job.json").string()));
            } catch (const nlohmann::json::parse_error& e) {
                throw std::runtime_error((p / "job.json").string() + ": malformed JSON (byte " + std::to_string(e.byte) + ")");
            }
        }
        if (run.evaluations.empty() && !run.history && !run.steps)
            throw std::runtime_error(path + ": not a classwise run (no results.json, eval_*/results.json, history.csv "
                                            "or steps.csv in it)");
    }
    if (!run.evaluations.empty()) {
        run.classes = run.evaluations.front().results.at("classes").get<std::vector<std::string>>();
        for (const Evaluation& e : run.evaluations)
            if (e.results.at("classes") != run.evaluations.front().results.at("classes"))
                throw std::runtime_error(e.file + ": its classes differ from " + run.evaluations.front().file + "'s");
    }
    if (run.history) {
        const std::vector<std::string> hc = history_classes(*run.history, (p / "history.csv").string());
        if (run.classes.empty()) run.classes = hc;
        else if (hc != run.classes)
            throw std::runtime_error((p / "history.csv").string() + ": its class columns differ from results.json's classes");
    }
    if (run.evaluations.empty()) run.notes.push_back("no final evaluation yet (no results.json): training curves only");
    return run;
}

}  // namespace cw::report
