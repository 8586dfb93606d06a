#pragma once
// Figures are drawn by gnuplot (Debian's gnuplot-nox), driven from C++: each figure is a gnuplot script plus the
// data files it reads, both kept next to the images so that a researcher can restyle a figure by editing its .gp
// file and running `gnuplot name.gp` in that folder. One run of gnuplot writes the SVG (for the HTML page) and the
// PNG (for people who open an image).
#include <string>
#include <utility>
#include <vector>

namespace cw::report {

struct Figure {
    std::string name;                   // file stem: <dir>/<name>.svg, .png, .gp
    std::string caption;                // what the page says under it
    int width = 900, height = 420;      // pixels (the SVG's size too)
    std::vector<std::pair<std::string, std::string>> data;   // data files: name (in <dir>) → content
    std::string script;                 // the plot commands, after the terminal is set; reads the data files by name
};

struct RenderedFigure {
    std::string name, caption;
    std::string svg_file, png_file;     // paths
    int width = 0;                      // pixels, as drawn
};

// The program run: $CLASSWISE_GNUPLOT if set, else "gnuplot".
std::string gnuplot_program();
bool gnuplot_available();

// Writes the data files and <name>.gp into `dir` and runs gnuplot there. Throws std::runtime_error naming the
// script and gnuplot's first error line when gnuplot fails or writes no SVG.
RenderedFigure render(const Figure& figure, const std::string& dir);

// A gnuplot single-quoted string literal (no escapes are processed inside; a quote is doubled).
std::string gp_string(const std::string& text);
// A field of a gnuplot data file: double-quoted, with any double quote in it turned into a single one (gnuplot's
// data files have no escape for it) and newlines into spaces.
std::string gp_data_label(const std::string& text);

// Colours that stay distinct for colour-blind readers (Paul Tol's "bright" scheme): the clean series is always
// blue, the first attack red, then green, yellow, cyan, purple, grey.
const std::string& series_colour(size_t i);

}  // namespace cw::report
