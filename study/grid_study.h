#pragma once
// A grid (study/grid.h) as a study (study/study.h), so benz_universality spreads its cells with the flags every
// experiment binary has (docs/cluster.md): one arm per setting, the grid's seeds as the study's --seeds (a cell is
// the job <setting>/seed<k> in <out>/<setting>/seed<k>/, trained with --seed + k), a full run that goes on past a
// cell that fails (its data is not on this machine), and the grid's summary (study/grid_summary.h) as the
// study's.
#include <string>
#include <vector>

#include "study/grid.h"
#include "study/study.h"

namespace cw::study {

// The grid with the seeds of a --seeds flag instead of its own ("": its own); throws naming --seeds.
Grid with_seeds(Grid grid, const std::string& seeds_flag);

// The study of the grid's cells; `seeds` gets the grid's seeds as a --seeds value ("0,1,2"). `defaults`, `extra`
// and `source` as cell_job takes them; the summary is written to defaults.common.out.
Study grid_study(const Grid& grid, const train::JobConfig& defaults, const std::vector<std::string>& extra,
                 const std::string& source, std::string& seeds);

}  // namespace cw::study
