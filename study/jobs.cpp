#include "study/jobs.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>

#include "study/job_lock.h"
#include "study/study.h"
#include "util/split_list.h"

namespace cw::study {

namespace fs = std::filesystem;

std::vector<uint64_t> parse_seeds(const std::string& text) {
    std::vector<uint64_t> seeds;
    std::set<uint64_t> seen;
    for (const std::string& s : util::split_list(text)) {
        if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos)
            throw std::invalid_argument("--seeds: '" + s + "' is not a whole number (expected e.g. 0,1,2)");
        const uint64_t k = std::stoull(s);
        if (!seen.insert(k).second) throw std::invalid_argument("--seeds: seed " + s + " is listed twice");
        seeds.push_back(k);
    }
    return seeds;
}

std::vector<StudyJob> study_jobs(const Study& study, const std::string& out, const std::vector<uint64_t>& seeds) {
    auto needs_of = [](const Arm& a) {
        std::vector<std::string> n = a.needs;
        if (!a.init_arm.empty() && std::find(n.begin(), n.end(), a.init_arm) == n.end()) n.push_back(a.init_arm);
        return n;
    };
    std::map<std::string, size_t> arm_index;
    for (size_t i = 0; i < study.arms.size(); ++i) arm_index[study.arms[i].name] = i;
    // Levels of the arms: 0 without needs, else 1 + the highest level of what it needs (a cycle never settles).
    std::vector<int> level(study.arms.size(), -1);
    for (size_t round = 0; round <= study.arms.size(); ++round)
        for (size_t i = 0; i < study.arms.size(); ++i) {
            int l = 0;
            for (const std::string& n : needs_of(study.arms[i])) {
                const auto it = arm_index.find(n);
                if (it == arm_index.end())
                    throw std::invalid_argument("study: arm '" + study.arms[i].name + "' needs arm '" + n +
                                                "', which this study does not have");
                l = level[it->second] < 0 ? -1 : std::max(l, level[it->second] + 1);
                if (l < 0) break;
            }
            level[i] = l;
        }
    for (size_t i = 0; i < study.arms.size(); ++i)
        if (level[i] < 0 || level[i] > static_cast<int>(study.arms.size()))
            throw std::invalid_argument("study: the needs of arm '" + study.arms[i].name + "' form a cycle");
    const int max_level = study.arms.empty() ? 0 : *std::max_element(level.begin(), level.end());

    std::vector<std::optional<uint64_t>> seed_list;
    if (seeds.empty()) seed_list.push_back(std::nullopt);
    for (uint64_t k : seeds) seed_list.push_back(k);
    auto id_of = [](const std::string& arm, const std::optional<uint64_t>& k) {
        return k ? arm + "/seed" + std::to_string(*k) : arm;
    };
    std::vector<StudyJob> jobs;
    for (int l = 0; l <= max_level; ++l)
        for (const auto& k : seed_list)
            for (size_t i = 0; i < study.arms.size(); ++i) {
                if (level[i] != l) continue;
                StudyJob j;
                j.index = static_cast<int>(jobs.size());
                j.id = id_of(study.arms[i].name, k);
                j.arm = i;
                j.seed = k;
                j.dir = (fs::path(out) / j.id).string();
                j.level = l;
                for (const std::string& n : needs_of(study.arms[i])) j.needs.push_back(id_of(n, k));
                jobs.push_back(j);
            }
    return jobs;
}

const StudyJob& find_job(const std::vector<StudyJob>& jobs, const std::string& id) {
    if (!id.empty() && id.size() < 10 && id.find_first_not_of("0123456789") == std::string::npos) {
        const size_t i = std::stoul(id);
        if (i < jobs.size()) return jobs[i];
    }
    for (const StudyJob& j : jobs)
        if (j.id == id) return j;
    std::string known;
    for (const StudyJob& j : jobs) known += (known.empty() ? "" : ", ") + j.id;
    throw std::invalid_argument("--job: no job '" + id + "' in this study (0.." + std::to_string(jobs.size() - 1) +
                                " or one of: " + known + "; see --list-jobs)");
}

const char* job_state_name(JobState s) {
    switch (s) {
        case JobState::Finished: return "finished";
        case JobState::Failed: return "failed";
        case JobState::Running: return "running";
        case JobState::Started: return "started, not running";
        case JobState::Missing: return "not started";
    }
    return "?";
}

JobState job_state(const Study& study, const StudyJob& job) {
    if (arm_finished(study.arms[job.arm], job.dir)) return JobState::Finished;
    if (live_lock_holder(job.dir)) return JobState::Running;
    if (fs::exists(fs::path(job.dir) / "job_error.txt")) return JobState::Failed;
    if (fs::exists(fs::path(job.dir) / "job.json")) return JobState::Started;
    // Work (study/work.h) writes no job.json: any file of its own (not the lock of a dead process) means started.
    if (study.arms[job.arm].is_work() && fs::is_directory(job.dir))
        for (const auto& e : fs::directory_iterator(job.dir))
            if (e.path().filename() != ".lock") return JobState::Started;
    return JobState::Missing;
}

}  // namespace cw::study
