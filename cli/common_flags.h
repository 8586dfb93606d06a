#pragma once
// The flags every classwise binary shares, parsed the same way everywhere:
//   --device auto|cpu|cuda   --data-dir DIR   --out DIR   --seed N   --resume   --quick   --epochs N
// plus --print-config (print every option's resolved value and exit: scripts and the CLI test use it).
// --quick applies the binary's preset (a short run on real data); a binary may offer further presets (cifar10_fairtat's
// --cpu-scale: the CPU recipe on the whole training set). A flag given on the command line wins over a preset.
//
//   cli::CommonFlags f;  f.out = "runs/x";  f.epochs = 10;            // the binary's defaults
//   cli::FlagSet app{"..."};  cli::add_common_flags(app, f, spec);  app.option(...);   // its own flags
//   if (int code = cli::parse(app, argc, argv, f, spec, std::cout, std::cerr); code >= 0) return code;
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "util/flags.h"

namespace cw::cli {

struct CommonFlags {
    std::string device = "auto";
    std::string data_dir;          // empty: $CLASSWISE_DATA, else ./data
    std::string out;
    uint64_t seed = 0;
    bool resume = false;
    bool quick = false;
    int64_t epochs = 1;
    bool print_config = false;
    std::string preset;            // the preset beyond --quick that was applied ("--cpu-scale"), empty if none
    // Every preset the binary offers, --quick first, as (flag, what it runs): the CPU question names them.
    std::vector<std::pair<std::string, std::string>> offered_presets;
    std::map<std::string, bool> preset_given;   // storage of the further presets' flags
    std::string command_line;      // argv as typed (shell-quoted), for job.json and the report page; set by parse()
};

// argv joined into one line a shell would split back the same way (arguments quoted where needed).
std::string shell_command_line(int argc, const char* const* argv);

// A named set of flag values, applied by its own flag; each value goes through its flag's parser and checks.
struct Preset {
    std::string flag;                                           // "--cpu-scale"
    std::string what;                                           // what it runs, and for how long
    std::vector<std::pair<std::string, std::string>> values;    // flag, value
};

struct CommonSpec {
    std::string program;                                        // for messages: "train: --lr: ..."
    std::string epochs_help = "training epochs";
    std::string resume_help = "continue from <out>/state.safetensors";
    std::vector<std::pair<std::string, std::string>> quick_preset;   // flag, value
    std::string quick_what = "a short run on real data";
    std::vector<Preset> presets;                                // beyond --quick; at most one preset per run
};

void add_common_flags(FlagSet& app, CommonFlags& f, const CommonSpec& spec);

// Parses argv. Returns -1 when the program should go on, otherwise the exit code: 0 after --help or
// --print-config, 1 after a bad flag (one line on `err` naming it). Applies the --quick preset (one line on `out`
// says what it set; on `err` with a study's --list-jobs, whose stdout is job ids only).
int parse(FlagSet& app, int argc, const char* const* argv, CommonFlags& f, const CommonSpec& spec, std::ostream& out,
          std::ostream& err);

// "--train-n 4000 --epochs 3 ..." for help texts.
std::string preset_text(const std::vector<std::pair<std::string, std::string>>& preset);

}  // namespace cw::cli

#include <functional>

#include "util/flags.h"
namespace cw::cli {
// Runs a binary's work: any exception becomes one line "<program>: <what>" on stderr and exit code 1; an
// ExitRequest ends the work early with its code; an evaluation stopped by a signal (eval::EvalInterrupted while
// train::stop_requested) says where it stopped, "continue with --resume", and exits 130 / 143.
int run_guarded(const std::string& program, const std::function<int()>& work);

// Thrown by work that has done all the program has to do before the program's own code ends (a study's --job,
// --list-jobs, --slurm: the experiment's analysis after the arms must not run then).
struct ExitRequest {
    int code = 0;
};
}  // namespace cw::cli
