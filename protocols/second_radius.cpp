#include "protocols/second_radius.h"

#include <filesystem>

#include "protocols/checkpoint_eval.h"
#include "train/stop_signal.h"
#include "util/format.h"
#include "util/split_list.h"

namespace cw::protocols {

namespace fs = std::filesystem;

std::string second_radius_folder(const std::string& checkpoint, float eps) {
    return "eval_" + checkpoint + "_eps" + util::in_255ths(eps);
}

std::vector<std::string> evaluate_second_radius(const train::JobConfig& job, float eps,
                                                const std::vector<std::string>& attacks, std::ostream& log) {
    // Ctrl-C or SIGTERM stops the evaluation in progress after its step, with its state saved (eval::EvalInterrupted).
    train::StopSignalScope signals;
    std::vector<std::string> done;
    for (const std::string& which : util::split_list(job.final_checkpoints)) {
        const fs::path weights = fs::path(job.common.out) / (which + ".safetensors");
        if (!fs::exists(weights)) continue;   // the job said why (no --ema, say)
        const fs::path dir = fs::path(job.common.out) / second_radius_folder(which, eps);
        done.push_back(dir.string());
        if (job.common.resume && fs::exists(dir / "results.json")) {
            log << "second radius: " << (dir / "results.json").string() << " exists; skipped\n";
            continue;
        }
        CheckpointEval c = checkpoint_eval_like(job, weights.string(), dir.string());
        c.dataset = job.data.dataset;
        c.eps = eps;
        c.alpha = eps / 4;
        c.attacks = attacks;
        evaluate_checkpoint(c, log);
        log << "wrote " << (dir / "results.json").string() << "\n";
    }
    return done;
}

}  // namespace cw::protocols
