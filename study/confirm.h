#pragma once
// Before a study trains on a CPU: paper-scale protocols take days to months there (cifar10_fairtat: 19 arms of
// 200 epochs, about half a year on two cores). The rule, once for every experiment binary:
//   - on a GPU, or with --quick (presets sized for minutes on two cores), or when --resume continues a study that
//     has started training, nothing is asked;
//   - otherwise a probe times a few steps (estimate_training_seconds) and prints the estimate; when it exceeds
//     --ask-above (default one hour) the ways forward are printed (--quick, a GPU, --yes) and
//       * with --yes training starts;
//       * from a terminal (stdin is a tty) the user is asked; anything but y/yes leaves without training (exit 2);
//       * without a terminal it leaves at once with exit code kNotConfirmedExit (2): a script or CI job that would
//         silently start months of work fails loudly instead, and says which flag it needs.
// A SIGINT / SIGTERM during the probe or the question stops here with 130 / 143 (nothing has started yet).
#include <istream>
#include <string>
#include <vector>
#include <ostream>

#include "cli/common_flags.h"
#include "study/study_flags.h"

namespace cw::study {

struct Study;

constexpr int kNotConfirmedExit = 2;

// True when a study's folder already holds a started run of one of its jobs (`dirs`: their folders).
bool any_started(const std::vector<std::string>& dirs);

// Returns -1 when training may start, otherwise the code to exit with. `in` / `in_is_terminal`: where the answer
// comes from (std::cin and isatty(0) in the binaries; a string stream in tests).
int confirm_training(const Study& study, const cli::CommonFlags& common, const StudyFlags& flags, bool started,
                     std::ostream& out, std::istream& in, bool in_is_terminal);

}  // namespace cw::study
