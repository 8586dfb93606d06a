#pragma once
// The reproduction study's pilot (docs/reproduction.md): PGD-AT alone at the protocol's setting, judged on two
// criteria — (a) its worst class keeps at least 10% PGD-20 accuracy averaged over seeds (room for a fair method to
// lift it), (b) the last two epochs change overall PGD-20 by less than one point (trained, not stopped midway).
#include <filesystem>
#include <ostream>
#include <string>

namespace cw::report::reproduction {

// The pilot's section for one dataset: a table row per PGD-AT seed and the two criteria's verdicts. They are judged
// on the study's own PGD-AT runs (results/<dataset>/pgd_at) once it has some; the early pilot runs
// (results/pilot/<dataset>/pgd_at), made before the study fixed its convolution setting, are shown beside them and
// decide only while the study has none.
void pilot_section(std::ostream& md, const std::filesystem::path& results, const std::string& dataset);

}  // namespace cw::report::reproduction
