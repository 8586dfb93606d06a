#include "study/job_run.h"

#include <filesystem>
#include <stdexcept>

#include "study/job_lock.h"
#include "study/study.h"
#include "util/atomic_file.h"

namespace cw::study {

namespace fs = std::filesystem;

std::map<std::string, std::string> input_dirs(const Study& study, const StudyJob& job, const std::vector<StudyJob>& jobs) {
    std::map<std::string, std::string> dirs;
    for (const std::string& id : job.needs) {
        const StudyJob& need = find_job(jobs, id);
        dirs[study.arms[need.arm].name] = need.dir;
    }
    return dirs;
}

Arm job_arm(const Study& study, const StudyJob& job, const std::vector<StudyJob>& jobs, const cli::CommonFlags& common) {
    Arm a = study.arms[job.arm];
    a.name = job.id;   // "pgd_at/seed1" in what the job prints, not "pgd_at"
    if (job.seed) a.job.common.seed = common.seed + *job.seed;
    const auto inputs = input_dirs(study, job, jobs);
    if (!a.init_arm.empty()) a.job.init = (fs::path(inputs.at(a.init_arm)) / a.init_file).string();
    if (a.use_inputs) a.use_inputs(a.job, inputs);
    return a;
}

void require_inputs(const Study& study, const StudyJob& job, const std::vector<StudyJob>& jobs) {
    std::string waiting;
    for (const std::string& id : job.needs) {
        const StudyJob& need = find_job(jobs, id);
        if (!arm_finished(study.arms[need.arm], need.dir)) waiting += (waiting.empty() ? "" : ", ") + id;
    }
    if (!waiting.empty()) throw std::runtime_error("job " + job.id + " needs " + waiting + " finished first (not finished yet)");
}

void record_failure(const std::string& dir, const std::string& what) {
    fs::create_directories(dir);
    util::write_file_atomic((fs::path(dir) / "job_error.txt").string(), what + "\n");
}

namespace {

int run_work(const Arm& a, const StudyJob& job, const std::vector<StudyJob>& jobs, const Study& study,
             const cli::CommonFlags& common, std::ostream& out) {
    if (common.resume && a.work.finished(job.dir)) {
        out << a.name << " finished before; skipped (" << job.dir << ")\n";
        return 0;
    }
    out << a.name << " (" << a.work.what << ") into " << job.dir << std::endl;
    WorkRun run;
    run.dir = job.dir;
    run.seed = job.seed ? common.seed + *job.seed : common.seed;
    run.inputs = input_dirs(study, job, jobs);
    run.common = common;
    run.common.out = job.dir;
    return a.work.run(run, out);
}

}  // namespace

int run_one(const Study& study, const StudyJob& job, const std::vector<StudyJob>& jobs, const cli::CommonFlags& common,
            std::ostream& out) {
    JobLock lock(job.dir, "job " + job.id);
    const Arm a = job_arm(study, job, jobs, common);
    try {
        const int code = a.is_work() ? run_work(a, job, jobs, study, common, out)
                                     : run_arm(a, common, job.dir, out, job.seed.has_value());
        fs::remove(fs::path(job.dir) / "job_error.txt");
        return code;
    } catch (const std::exception& e) {
        record_failure(job.dir, e.what());
        throw;
    }
}

}  // namespace cw::study
