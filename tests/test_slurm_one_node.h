#pragma once
// A one-node Slurm for a test (tests/slurm_one_node.sh: munged, slurmctld and slurmd on localhost, everything in a
// temporary folder) and reading back what was submitted: shared by tests/test_study_slurm.cpp (a study's scripts
// on a real Slurm) and tests/test_benz_features_slurm.cpp (benz_features' constructions chained between levels).
// Where Slurm cannot run (not root, not installed, daemons that do not come up) the tests skip, counted, saying
// why; with CLASSWISE_REQUIRE_SLURM=1 (CI, which installs Slurm) that is a failure instead.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/skip.h"
#include "tests/test_experiments_util.h"
#include "tests/test_process.h"
#include "util/atomic_file.h"

namespace cw_slurm_test {

namespace fs = std::filesystem;
using cw_experiments_test::fresh_dir;

// One cluster for one test: started by the constructor, stopped by the destructor (its jobs cancelled, its daemons
// and what is left of its jobs killed, its folder removed), also when a REQUIRE ends the test early.
class OneNodeSlurm {
public:
    explicit OneNodeSlurm(const std::string& name) : dir_(fresh_dir(name)) {
        const cw_test::CommandOutput o = cw_test::run_shell("sh " + script() + " start " + dir_.string() + " 2>&1");
        output = o.text;
        code = o.code;
        std::istringstream lines(o.text);
        for (std::string line; std::getline(lines, line);)
            if (!line.empty()) why_not = line;   // the script's reason is its last line
    }
    ~OneNodeSlurm() { std::system(("sh " + script() + " stop " + dir_.string() + " > /dev/null 2>&1").c_str()); }
    OneNodeSlurm(const OneNodeSlurm&) = delete;
    OneNodeSlurm& operator=(const OneNodeSlurm&) = delete;

    // The environment that reaches this cluster with Slurm's clients (sbatch, squeue).
    std::string env() const { return "env SLURM_CONF=" + (dir_ / "slurm.conf").string() + " "; }

    // Every job the cluster knows, ended ones too: "<job>" or "<array job>_<task>" (a pending array's tasks as
    // "<array job>_[<tasks>]") → "<name> <state>".
    std::map<std::string, std::string> jobs() const {
        std::map<std::string, std::string> states;
        std::istringstream lines(cw_test::run_shell(env() + "squeue -t all -h -o '%i %j %T' 2>&1").text);
        for (std::string id, name, state; lines >> id >> name >> state;) states[id] = name + " " + state;
        return states;
    }

    // Waits until no job is pending or running (squeue prints none); false when `seconds` pass first.
    bool wait_all_ended(double seconds) const {
        const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
        while (std::chrono::steady_clock::now() < end) {
            const cw_test::CommandOutput o = cw_test::run_shell(env() + "squeue -h 2>&1");
            if (o.code == 0 && o.text.empty()) return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
        }
        return false;
    }

    int code = -1;          // start's exit code: 0 up, 77 Slurm cannot run here
    std::string output;     // what start said
    std::string why_not;    // its last line

private:
    static std::string script() { return (cw_test::repo_root() / "tests" / "slurm_one_node.sh").string(); }
    fs::path dir_;
};

inline bool slurm_required() {
    const char* v = std::getenv("CLASSWISE_REQUIRE_SLURM");
    return v && std::string(v) == "1";
}

// Skips the test (counted) when the cluster did not start because Slurm cannot run here; fails when it should
// have (CLASSWISE_REQUIRE_SLURM=1) or when the script broke.
#define CW_SKIP_WITHOUT_SLURM(cluster)                                                          \
    do {                                                                                       \
        INFO("tests/slurm_one_node.sh start:\n" << (cluster).output);                          \
        if ((cluster).code == 77 && !cw_slurm_test::slurm_required())                          \
            CW_SKIP("no one-node Slurm here: " + (cluster).why_not);                           \
        REQUIRE((cluster).code == 0);                                                          \
    } while (0)

// The submit command --slurm printed.
inline std::string submit_command(const std::string& slurm_output) {
    const std::string marker = "submit them with:\n  ";
    const size_t at = slurm_output.find(marker);
    REQUIRE(at != std::string::npos);
    const size_t from = at + marker.size();
    return slurm_output.substr(from, slurm_output.find('\n', from) - from);
}

struct Submitted {
    std::vector<std::string> levels;   // each level's array job id
    std::string summary;
};

// The ids submit.sh reports: "submitted the levels' job arrays 5 6 and the summary 7".
inline Submitted submitted_ids(const std::string& submit_output) {
    const std::string head = "submitted the levels' job arrays ";
    const size_t at = submit_output.find(head);
    REQUIRE(at != std::string::npos);
    std::istringstream words(submit_output.substr(at + head.size()));
    Submitted s;
    for (std::string w; words >> w && w != "and";) s.levels.push_back(w);
    std::string the, summary;
    words >> the >> summary >> s.summary;
    REQUIRE(!s.summary.empty());
    return s;
}

// A job's "<name> <state>", or "(not known)".
inline std::string state_of(const std::map<std::string, std::string>& jobs, const std::string& id) {
    const auto it = jobs.find(id);
    return it == jobs.end() ? "(not known)" : it->second;
}

// A file's text for a failure message, which must not fail itself.
inline std::string text_or_missing(const fs::path& file) {
    return fs::exists(file) ? cw::util::read_file_text(file.string()) : "(" + file.string() + " missing)";
}


}  // namespace cw_slurm_test
