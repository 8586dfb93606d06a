#include "train/methods/method_options.h"

namespace cw::train {

attacks::ModelMode resolve_mode(ModeChoice choice, attacks::ModelMode method_default) {
    if (choice == ModeChoice::Train) return attacks::ModelMode::Train;
    if (choice == ModeChoice::Eval) return attacks::ModelMode::Eval;
    return method_default;
}

CleanForward resolve_clean_forward(CleanForwardChoice choice, CleanForward method_default) {
    switch (choice) {
        case CleanForwardChoice::Off: return CleanForward::Off;
        case CleanForwardChoice::Train: return CleanForward::Train;
        case CleanForwardChoice::Eval: return CleanForward::Eval;
        case CleanForwardChoice::Default: break;
    }
    return method_default;
}

const char* clean_forward_name(CleanForward c) {
    return c == CleanForward::Off ? "off" : c == CleanForward::Train ? "train" : "eval";
}

}  // namespace cw::train
