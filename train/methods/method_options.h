#pragma once
// Every setting of the baseline methods (docs/protocols/training.md §4–§9), one struct for the registry and the command line.
// A negative value means "the method's default" where the default depends on the method or on ε.
#include <string>
#include <vector>

#include "attacks/early_stop_pgd.h"
// The fair methods' settings are plain data kept here, beside the one struct the command line fills, so that the
// baselines and fairness/methods/ (one layer up) both see it; the methods themselves stay in fairness/methods/.
#include "train/methods/cfa_options.h"
#include "train/methods/dafa_options.h"
#include "train/methods/faal_options.h"
#include "train/methods/frl_options.h"
#include "train/methods/longtail_options.h"
#include "train/method.h"

namespace cw::train {

enum class ModeChoice { Default, Train, Eval };            // model mode while the attack crafts x'
enum class CleanForwardChoice { Default, Off, Train, Eval };
enum class TradesForm {
    Original,        // Zhang et al.: CE_i/B + β·KL_i/B
    CfaNormalised,   // CFA / FAIR-TAT code: ((1−b)·CE_i + b·KL_i)/B, b = β/(1+β) = the original / (1+β)
};

struct MethodOptions {
    float eps = 8.f / 255;        // L∞ radius; the trainer sets the dataset's default
    float alpha = -1;             // step of the multi-step attacks; < 0: 2.5·ε/steps (2/255 at ε = 8/255, K = 10)
    int steps = 10;               // K of PGD-AT, TRADES, FAT, MART
    ModeChoice attack_mode = ModeChoice::Default;   // train: PGD-AT, FGSM-RS, FAT-cfa; eval: TRADES, MART, FAT-original
    bool random_start = true;     // off: PGD-AT / FGSM-RS start at x, TRADES / MART without the 0.001·N(0,I) noise
    CleanForwardChoice clean_forward = CleanForwardChoice::Default;  // PGD-AT: train (Rice/CFA); others: off

    float beta = -1;              // TRADES (default 6) / MART (default 5, MART's ResNet-18 code)
    TradesForm trades_form = TradesForm::Original;

    attacks::FatSemantics fat_semantics = attacks::FatSemantics::Original;
    int fat_tau = -1;             // < 0: original → dynamic τ (0 / 1 / 2 by epoch); cfa → 3
    float fat_omega = -1;         // < 0: original → 0.001, cfa → 0

    float fgsm_alpha_factor = 1.25f;   // FGSM-RS step α = factor·ε (Wong et al.: 10/255 at 8/255)
    bool fgsm_guard = false;           // catastrophic-overfitting guard (docs/protocols/training.md §6)
    int fgsm_guard_steps = 5;
    float fgsm_guard_alpha = -1;       // < 0: ε/4 (Wong's 2/255 at ε = 8/255)
    float fgsm_guard_drop = 0.2f;      // stop when the check's robust accuracy falls by more than this

    CfaOptions cfa;                    // CFA, FAIR-TAT (fairness/methods/)
    FrlOptions frl;                    // FRL, WAT
    LongTailOptions longtail;          // long-tail remedies, BAT
    DafaOptions dafa;                  // DAFA, TRIX
    FaalOptions faal;                  // FAAL

    float resolved_alpha() const { return alpha >= 0 ? alpha : 2.5f * eps / static_cast<float>(steps > 0 ? steps : 1); }
};

attacks::ModelMode resolve_mode(ModeChoice choice, attacks::ModelMode method_default);
CleanForward resolve_clean_forward(CleanForwardChoice choice, CleanForward method_default);
const char* clean_forward_name(CleanForward c);

}  // namespace cw::train
