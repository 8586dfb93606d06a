#include "cli/common_flags.h"

#include <iostream>
#include <sstream>

#include "eval/evaluator.h"
#include "train/stop_signal.h"
#include "util/format.h"

namespace cw::cli {

std::string preset_text(const std::vector<std::pair<std::string, std::string>>& preset) {
    std::string s;
    for (const auto& [flag, value] : preset) s += (s.empty() ? "" : " ") + flag + " " + value;
    return s;
}

void add_common_flags(FlagSet& app, CommonFlags& f, const CommonSpec& spec) {
    app.option("--device", f.device, "auto (CUDA if a GPU and the plugin are there, else CPU, said in one line), cpu or cuda")
        .one_of({"auto", "cpu", "cuda"}).show_default();
    app.option("--data-dir", f.data_dir, "data folder (default: $CLASSWISE_DATA, else ./data)");
    // Empty, a run would write its arm folders into the working directory.
    app.option("--out", f.out, "output folder").non_empty().show_default();
    app.option("--seed", f.seed, "random seed (initialisation, data order, attacks)").show_default();
    app.flag("--resume", f.resume, spec.resume_help);
    app.option("--epochs", f.epochs, spec.epochs_help).range(int64_t{1}, int64_t{1000000}).show_default();
    app.flag("--quick", f.quick,
             spec.quick_preset.empty() ? std::string("no effect here (nothing to shorten)")
                                           : spec.quick_what + ": " + preset_text(spec.quick_preset) +
                                                 " (flags given explicitly win)");
    app.flag("--print-config", f.print_config, "print every option's resolved value and exit");
    f.offered_presets.clear();
    if (!spec.quick_preset.empty()) f.offered_presets.emplace_back("--quick", spec.quick_what);
    for (const Preset& p : spec.presets) {
        app.flag(p.flag, f.preset_given[p.flag], p.what + ": " + preset_text(p.values) + " (flags given explicitly win)");
        f.offered_presets.emplace_back(p.flag, p.what);
    }
}

namespace {
// Each preset value goes through its flag's own parser and check; a flag given on the command line keeps its value.
void apply_preset(FlagSet& app, const std::string& name, const std::vector<std::pair<std::string, std::string>>& values,
                  std::ostream& out) {
    std::string applied, given;
    for (const auto& [flag, value] : values) {
        Flag opt = app.get(flag);
        if (opt.given()) {
            given += " " + flag + " " + opt.last_value();
            continue;
        }
        opt.apply(value);
        applied += " " + flag + " " + value;
    }
    out << name << " preset:" << (applied.empty() ? " none" : applied)
        << (given.empty() ? std::string() : "; from the command line:" + given) << "\n";
}
}  // namespace

std::string shell_command_line(int argc, const char* const* argv) {
    std::string line;
    for (int i = 0; i < argc; ++i) {
        const std::string a = argv[i];
        const bool plain = !a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                             "0123456789-_./=:,+@%") == std::string::npos;
        std::string quoted = "'";
        for (char c : a) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
        line += (i ? " " : "") + (plain ? a : quoted + "'");
    }
    return line;
}

int parse(FlagSet& app, int argc, const char* const* argv, CommonFlags& f, const CommonSpec& spec, std::ostream& out,
          std::ostream& err) {
    f.command_line = shell_command_line(argc, argv);
    try {
        app.parse(argc, argv);
        // On `err` when stdout is data: a study's --list-jobs prints job ids for `parallel` (study/study_flags.h).
        const bool stdout_is_data = app.has("--list-jobs") && app.get("--list-jobs").given();
        std::ostream& said = stdout_is_data ? err : out;
        const Preset* chosen = nullptr;
        for (const Preset& p : spec.presets) {
            if (!f.preset_given[p.flag]) continue;
            if (f.quick || chosen)
                throw FlagError((f.quick ? std::string("--quick") : chosen->flag) + " and " + p.flag +
                                " are two presets: give one");
            chosen = &p;
        }
        if (f.quick && !spec.quick_preset.empty()) apply_preset(app, "--quick", spec.quick_preset, said);
        if (chosen) {
            apply_preset(app, chosen->flag, chosen->values, said);
            f.preset = chosen->flag;
        }
    } catch (const FlagSet::HelpRequest&) {
        out << app.help();
        return 0;
    } catch (const FlagError& e) {
        err << spec.program << ": " << e.what() << " (see " << spec.program << " --help)\n";
        return 1;
    }
    if (f.print_config) {
        out << app.config_text();
        return 0;
    }
    return -1;
}

int run_guarded(const std::string& program, const std::function<int()>& work) {
    try {
        return work();
    } catch (const ExitRequest& e) {
        return e.code;
    } catch (const eval::EvalInterrupted& e) {
        // An evaluation stopped by Ctrl-C or SIGTERM with its state saved (an experiment's pass after its study):
        // the line says where, the code says which signal. Otherwise (a test's step limit) it is an error.
        if (!train::stop_requested()) {
            std::cerr << program << ": " << util::one_line(e.what()) << "\n";
            return 1;
        }
        std::cout << e.what() << " — continue with --resume" << std::endl;
        return train::stop_exit_code();
    } catch (const std::exception& e) {
        std::cerr << program << ": " << util::one_line(e.what()) << "\n";
        return 1;
    }
}
}  // namespace cw::cli
