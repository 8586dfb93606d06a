// scripts/lib/job_queue.sh: the queue the study scripts' workers share. Every job is taken exactly once, however many
// workers take and requeue at once. Seen failing with the lock taken on the queue file itself (the scripts' former
// `flock "$queue" ... sed -i`): sed renames a new file over the queue, so a worker that opens the new one runs beside a
// worker still locking the old one; of 300 jobs taken by 6 workers, 100 were taken twice and others never.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/test_nn_util.h"
#include "tests/test_process.h"

TEST_CASE("job_queue.sh: six workers take every job exactly once, requeued jobs too", "[scripts]") {
    cw_nn_test::ScratchDir dir;
    {
        std::ofstream queue(dir.file("queue.txt"));
        for (int j = 1; j <= 200; ++j) queue << j << "\n";
    }
    // Each worker takes jobs until the queue is empty; a job numbered up to 100 goes back once, as "r<job>" (the
    // study requeues a fine-tune whose hot start is still training).
    {
        std::ofstream script(dir.file("workers.sh"));
        script << "source '" << (cw_test::repo_root() / "scripts/lib/job_queue.sh").string() << "'\n"
               << "for w in 1 2 3 4 5 6; do\n"
               << "  ( while job=$(queue_pop queue.txt); [ -n \"$job\" ]; do\n"
               << "      echo \"$job\" >> taken$w\n"
               << "      case $job in r*) ;; *) [ \"$job\" -gt 100 ] || queue_push queue.txt \"r$job\" ;; esac\n"
               << "    done ) &\n"
               << "done\n"
               << "wait\n"
               << "cat taken*\n";
    }
    const auto run = cw_test::run_shell("cd '" + dir.path.string() + "' && bash workers.sh");
    REQUIRE(run.code == 0);
    std::vector<std::string> taken, expected;
    std::istringstream lines(run.text);
    for (std::string line; std::getline(lines, line);) taken.push_back(line);
    for (int j = 1; j <= 200; ++j) expected.push_back(std::to_string(j));
    for (int j = 1; j <= 100; ++j) expected.push_back("r" + std::to_string(j));
    std::sort(taken.begin(), taken.end());
    std::sort(expected.begin(), expected.end());
    CHECK(taken == expected);
}
