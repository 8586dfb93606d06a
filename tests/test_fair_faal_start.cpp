// FAAL fine-tunes a trained robust model (docs/protocols/faal.md §1, §7): a job without --init would quietly train
// from random weights, so it refuses to start, in one line naming --init, unless --faal-from-scratch asks for it.
#include <catch2/catch.hpp>

#include <sstream>

#include "jobs/job.h"
#include "jobs/job_checks.h"
#include "tests/test_nn_util.h"

using namespace cw;

namespace {

std::string first_error(train::JobConfig job) {
    std::ostringstream log;
    try {
        train::run_job(job, log);
    } catch (const std::exception& e) {
        return e.what();
    }
    return "no error";
}

}  // namespace

// Seen failing with the check removed (the job went on to the dataset) and with it testing "faal" only
// (faal_trades started from nothing).
TEST_CASE("faal: a job without --init is refused in one line naming --init, unless --faal-from-scratch", "[fair][faal]") {
    cw_nn_test::ScratchDir dir;
    train::JobConfig job;
    job.common.out = dir.path.string();
    job.data.dataset = "no-such-dataset";   // the refusal comes before any data is read
    for (const std::string method : {"faal", "faal_trades"}) {
        job.method = method;
        const std::string e = first_error(job);
        CHECK(e == "--init: " + method + " fine-tunes a trained robust model; give its checkpoint with --init (or "
                   "--faal-from-scratch to start from random weights)");
        CHECK(e.find('\n') == std::string::npos);
    }
    job.method_options.faal.from_scratch = true;
    CHECK(first_error(job).find("--init") == std::string::npos);   // allowed: it fails later, on the dataset
    job.method_options.faal.from_scratch = false;
    job.method = "trades";   // the other methods train from scratch as before
    CHECK(first_error(job).find("--init") == std::string::npos);
    CHECK_NOTHROW(train::check_fine_tune_start("faal", "runs/pgd_at/best_robust.safetensors", false));
}
