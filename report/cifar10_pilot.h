#pragma once
// The CIFAR-10 pilot (scripts/cifar10_pilot.sh): PGD-AT alone under candidate CPU recipes, one table row per
// candidate, judged on four criteria averaged over its seeds, each on the whole 10,000-image test set:
//   (a) the worst class keeps at least 15% PGD-20 accuracy (room for a fair method to lift it);
//   (b) overall PGD-20 at least 35% at eps 8/255 (a robust model worth the name);
//   (c) the last two epochs' overall PGD-20 (per-epoch evaluation) within one point (trained, not stopped midway);
//   (d) at most 90 minutes per run on one core with two runs side by side (45 on two cores).
// Beside them, the per-class ordering against the papers': is cat the worst class, are automobile and truck the two
// best (docs/protocols/published_numbers.md)?
#include <filesystem>
#include <ostream>

namespace cw::report::reproduction {

// Reads results/cifar10-pilot/<candidate>/pgd_at/seed<k>/ (results.json, history.csv, wall.txt); writes nothing
// when the folder is absent.
void cifar10_pilot_section(std::ostream& md, const std::filesystem::path& results);

}  // namespace cw::report::reproduction
