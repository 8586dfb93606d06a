#pragma once
// SIGINT / SIGTERM during training: the first one asks the trainer to stop after the current batch, save a
// resumable state and exit cleanly; a second one kills the process at once (default action).
namespace cw::train {

class StopSignalScope {
public:
    StopSignalScope();    // installs the handlers, clears any earlier request
    ~StopSignalScope();   // restores the previous handlers
    StopSignalScope(const StopSignalScope&) = delete;
    StopSignalScope& operator=(const StopSignalScope&) = delete;
};

// The signal that asked to stop (SIGINT / SIGTERM), or 0.
int stop_requested();

}  // namespace cw::train
