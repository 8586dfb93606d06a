#pragma once
// SIGINT / SIGTERM during training: the first one asks the trainer to stop after the current batch, save a
// resumable state and exit cleanly; a second one kills the process at once (default action).
//
// Scopes nest: a study holds one over all its phases (probe, arms, summary), the job one over training and its
// final evaluation, the trainer one over its loop. Only the outermost installs the handlers and clears an earlier
// request, so a signal that arrives in one phase (the study's probe, say) is still seen by the phases after it
// instead of being forgotten when the next trainer starts.
namespace cw::train {

class StopSignalScope {
public:
    StopSignalScope();    // the outermost: installs the handlers, clears any earlier request
    ~StopSignalScope();   // the outermost: restores the previous handlers
    StopSignalScope(const StopSignalScope&) = delete;
    StopSignalScope& operator=(const StopSignalScope&) = delete;
};

// The signal that asked to stop (SIGINT / SIGTERM), or 0.
int stop_requested();

// The exit code of a run stopped by that signal: 130 after SIGINT, 143 after SIGTERM (128 + the signal), 0 if none.
int stop_exit_code();

}  // namespace cw::train
