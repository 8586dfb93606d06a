#include "study/grid_study.h"

#include <stdexcept>

#include "study/grid_summary.h"
#include "study/jobs.h"

namespace cw::study {

Grid with_seeds(Grid grid, const std::string& seeds_flag) {
    const std::vector<uint64_t> seeds = parse_seeds(seeds_flag);
    if (!seeds.empty()) grid.seeds = seeds;
    return grid;
}

Study grid_study(const Grid& grid, const train::JobConfig& defaults, const std::vector<std::string>& extra,
                 const std::string& source, std::string& seeds) {
    Study s;
    s.title = grid.title;
    for (const GridCell& c : grid_cells(grid)) {
        if (c.seed != 0) continue;   // one arm per setting; the study gives each job its seed
        Arm a;
        a.name = grid.settings[c.setting].name;
        a.job = cell_job(grid, c, defaults, extra, source);
        s.arms.push_back(a);
    }
    seeds.clear();
    for (uint64_t k : grid.seeds) seeds += (seeds.empty() ? "" : ",") + std::to_string(k);
    s.keep_going = true;
    const std::string out = defaults.common.out;
    s.summary = [grid, defaults, extra, source, out](const std::vector<StudyJob>&, std::ostream& log) {
        write_grid_summary(grid, defaults, extra, source, out, log);
        return 0;
    };
    return s;
}

}  // namespace cw::study
