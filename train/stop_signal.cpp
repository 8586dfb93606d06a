#include "train/stop_signal.h"

#include <csignal>

namespace cw::train {

namespace {
volatile std::sig_atomic_t requested = 0;
int depth = 0;   // open scopes; the handlers are installed while it is above 0
struct sigaction previous_int, previous_term;

void on_signal(int sig) {
    if (requested) {  // the second signal: do not wait for the batch to finish
        std::signal(sig, SIG_DFL);
        std::raise(sig);
        return;
    }
    requested = sig;
}
}  // namespace

StopSignalScope::StopSignalScope() {
    if (depth++ > 0) return;
    requested = 0;
    struct sigaction sa = {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &previous_int);
    sigaction(SIGTERM, &sa, &previous_term);
}

StopSignalScope::~StopSignalScope() {
    if (--depth > 0) return;
    sigaction(SIGINT, &previous_int, nullptr);
    sigaction(SIGTERM, &previous_term, nullptr);
}

int stop_requested() { return requested; }

int stop_exit_code() { return requested ? 128 + requested : 0; }

}  // namespace cw::train
