#include "study/slurm.h"

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "util/atomic_file.h"
#include "study/jobs.h"

namespace cw::study {

namespace fs = std::filesystem;

namespace {
std::string quoted(const std::string& s) {
    if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=.,/:@%")
                          == std::string::npos)
        return s;
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

bool mode_flag(const std::string& a, bool& takes_value) {
    takes_value = false;
    if (a == "--list-jobs" || a == "--summary" || a == "--slurm") return true;
    if (a.rfind("--job=", 0) == 0 || a.rfind("--level=", 0) == 0 || a.rfind("--slurm-", 0) == 0) {
        takes_value = a.rfind("--slurm-", 0) == 0 && a.find('=') == std::string::npos;
        return true;
    }
    if (a == "--job" || a == "--level") {
        takes_value = true;
        return true;
    }
    return false;
}
}  // namespace

std::vector<std::string> own_argv() {
    std::ifstream in("/proc/self/cmdline", std::ios::binary);
    std::vector<std::string> argv;
    for (std::string a; std::getline(in, a, '\0');) argv.push_back(a);
    return argv;
}

std::string rerun_command(const std::vector<std::string>& argv) {
    std::string cmd = quoted(fs::canonical("/proc/self/exe").string());
    for (size_t i = 1; i < argv.size(); ++i) {
        bool takes_value = false;
        if (mode_flag(argv[i], takes_value)) {
            if (takes_value) ++i;
            continue;
        }
        cmd += " " + quoted(argv[i]);
    }
    return cmd;
}

// sbatch refuses a malformed time only when the scripts are submitted, and a partition name with a line break would
// write lines of its own into them: both are checked before anything is written.
void check_slurm_options(const SlurmOptions& o) {
    static const std::regex time(R"((\d+-\d+(:\d+){0,2}|\d+(:\d+){0,2}|infinite|unlimited|INFINITE|UNLIMITED))");
    if (!std::regex_match(o.time, time))
        throw std::invalid_argument("--slurm-time: expected Slurm's forms MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or "
                                    "D-HH:MM:SS, got '" + o.time + "'");
    static const std::regex partition(R"([A-Za-z0-9_.,-]*)");
    if (!std::regex_match(o.partition, partition))
        throw std::invalid_argument("--slurm-partition: expected a partition name (letters, digits, _ . - and commas "
                                    "between names), got '" + o.partition + "'");
}

std::string write_slurm_scripts(const std::vector<StudyJob>& jobs, const std::string& dir, const std::string& title,
                                const SlurmOptions& o, const std::string& command, const std::string& workdir) {
    check_slurm_options(o);
    fs::create_directories(dir);
    int levels = 0;
    for (const StudyJob& j : jobs) levels = std::max(levels, j.level + 1);
    auto header = [&](const std::string& name, const std::string& log, bool gpu) {
        std::ostringstream h;
        h << "#!/bin/sh\n# " << title << " — written by --slurm; submit with submit.sh\n"
          << "#SBATCH --job-name=" << name << "\n#SBATCH --chdir=" << workdir << "\n#SBATCH --output=" << log << "\n"
          << "#SBATCH --open-mode=append\n#SBATCH --cpus-per-task=" << o.cpus << "\n#SBATCH --time=" << o.time << "\n";
        if (gpu && o.gpus > 0) h << "#SBATCH --gres=gpu:" << o.gpus << "\n";
        if (!o.partition.empty()) h << "#SBATCH --partition=" << o.partition << "\n";
        h << "#SBATCH --signal=B:TERM@" << o.signal_seconds << "\n#SBATCH --requeue\n";
        return h.str();
    };
    const std::string abs = fs::absolute(dir).string();
    std::ostringstream submit;
    submit << "#!/bin/sh\n# Submits " << title << ": one job array per dependency level, each after the one before\n"
           << "# has succeeded (afterok), then the summary once all have ended (afterany).\nset -e\n";
    std::string all, levels_list;
    for (int l = 0; l < levels; ++l) {
        std::ostringstream list;
        int n = 0;
        for (const StudyJob& j : jobs)
            if (j.level == l) {
                list << j.id << "\n";
                ++n;
            }
        const std::string lst = abs + "/level" + std::to_string(l) + ".jobs";
        util::write_file_atomic(lst, list.str());
        // `exec`: the binary becomes the batch shell, the one process --signal=B:TERM signals.
        std::ostringstream s;
        s << header("level" + std::to_string(l), abs + "/level" + std::to_string(l) + "_%a.log", true)
          << "#SBATCH --array=0-" << n - 1 << "\n"
          << "job=$(sed -n \"$((SLURM_ARRAY_TASK_ID + 1))p\" " << quoted(lst) << ")\n"
          << "exec " << command << " --yes --job \"$job\"\n";
        util::write_file_atomic(abs + "/level" + std::to_string(l) + ".sbatch", s.str());
        // --kill-on-invalid-dep: when a job of the level before fails, afterok can never be met; without it Slurm
        // keeps this level pending for ever (DependencyNeverSatisfied), so it never ends and the summary after it
        // never runs. --parsable prints "id" or "id;cluster": the id is what a dependency names.
        submit << "j" << l << "=$(sbatch --parsable"
               << (l ? " --kill-on-invalid-dep=yes --dependency=afterok:$j" + std::to_string(l - 1) : "") << " "
               << quoted(abs + "/level" + std::to_string(l) + ".sbatch") << ")\nj" << l << "=${j" << l << "%%;*}\n";
        all += ":$j" + std::to_string(l);
        levels_list += " $j" + std::to_string(l);
    }
    std::ostringstream sum;
    sum << header("summary", abs + "/summary.log", false) << "exec " << command << " --summary\n";
    util::write_file_atomic(abs + "/summary.sbatch", sum.str());
    submit << "s=$(sbatch --parsable --dependency=afterany" << all << " " << quoted(abs + "/summary.sbatch") << ")\n"
           << "echo \"submitted the levels' job arrays" << levels_list << " and the summary ${s%%;*}\"\n";
    util::write_file_atomic(abs + "/submit.sh", submit.str());
    return "sh " + quoted(abs + "/submit.sh");
}

}  // namespace cw::study
