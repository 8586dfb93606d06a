#pragma once
// What the benz_* binaries add to a study's folder besides their tables: their own figures (drawn only
// where gnuplot is, as the study's are) and a section appended to the study's summary.md that links every table,
// JSON and figure of the analysis, the per-arm report figures (Benz et al. Figs. 1-2) included.
#include <string>
#include <vector>

#include "protocols/class_similarity.h"
#include "protocols/class_trends.h"
#include "report/gnuplot.h"

namespace cw::protocols {

// The worst class of every evaluated epoch, one series of points per evaluation ("test_clean", "test_pgd10"),
// the classes named on the y axis (by index when there are more than 20).
report::Figure worst_class_timeline(const std::string& name, const std::string& arm,
                                    const std::vector<TrendAnalysis>& trends, const std::vector<std::string>& classes);

// One point per class: its clean mean_other (x) against its clean and robust error in % (y).
report::Figure similarity_scatter(const std::string& name, const std::string& arm, const SimilarityAnalysis& s);

// Renders `figs` into <out>/figures/ when gnuplot is available; returns the links (relative to <out>) of what was
// drawn, empty otherwise.
std::vector<std::string> render_figures(const std::vector<report::Figure>& figs, const std::string& out);

// A Markdown link list of the run-report figures of arm `arm` (relative to <out>) that exist: the per-class bars
// of the last checkpoint, raw and minus the class mean, and the per-class curves over epochs; `label` names them
// ("Fig. 1, natural").
std::string arm_figure_links(const std::string& out, const std::string& arm, const std::string& label);

// Appends `section` to <out>/summary.md (atomically, the whole file rewritten).
void append_to_summary(const std::string& out, const std::string& section);

}  // namespace cw::protocols
