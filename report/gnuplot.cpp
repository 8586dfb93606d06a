#include "report/gnuplot.h"

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "util/atomic_file.h"
#include "report/subprocess.h"

namespace cw::report {

std::string gnuplot_program() {
    const char* env = std::getenv("CLASSWISE_GNUPLOT");
    return env && *env ? env : "gnuplot";
}

bool gnuplot_available() { return program_in_path(gnuplot_program()); }

std::string gp_string(const std::string& text) {
    std::string out = "'";
    for (char c : text) {
        if (c == '\'') out += "''";
        else if (c == '\n' || c == '\r') out += ' ';
        else out += c;
    }
    return out + "'";
}

std::string gp_data_label(const std::string& text) {
    std::string out = "\"";
    for (char c : text) out += c == '"' ? '\'' : (c == '\n' || c == '\r') ? ' ' : c;
    return out + "\"";
}

const std::string& series_colour(size_t i) {
    static const std::vector<std::string> colours = {"#4477AA", "#EE6677", "#228833", "#CCBB44",
                                                     "#66CCEE", "#AA3377", "#BBBBBB"};
    return colours[i % colours.size()];
}

namespace {
std::string first_error_line(const std::string& text) {
    std::istringstream in(text);
    std::string line, last;
    while (std::getline(in, line)) {
        if (line.find_first_not_of(" ^\t") == std::string::npos) continue;
        last = line;
        // gnuplot prints the offending line, a caret, then `"file" line N: message`; the message says most.
        if (line.find("line ") != std::string::npos && line.find(':') != std::string::npos) return line;
    }
    return last.empty() ? "no message" : last;
}
}  // namespace

RenderedFigure render(const Figure& figure, const std::string& dir) {
    namespace fs = std::filesystem;
    fs::create_directories(dir);
    for (const auto& [file, content] : figure.data) util::write_file_atomic((fs::path(dir) / file).string(), content);
    // `noenhanced`: class names such as "T-shirt/top" or "no_entry" are printed as they are (gnuplot's enhanced
    // text would turn _ and ^ into sub- and superscripts). "sans-serif" is resolved by the browser and fontconfig.
    std::ostringstream gp;
    gp << "# " << figure.caption << "\n# Rerun in this folder: gnuplot " << figure.name << ".gp\n"
       << "set terminal svg size " << figure.width << "," << figure.height
       << " dynamic noenhanced font 'sans-serif,12' background rgb 'white'\n"
       << "set output " << gp_string(figure.name + ".svg") << "\n"
       << figure.script << (figure.script.empty() || figure.script.back() == '\n' ? "" : "\n")
       << "set terminal pngcairo size " << figure.width << "," << figure.height
       << " noenhanced font 'sans-serif,10' background rgb 'white'\n"
       << "set output " << gp_string(figure.name + ".png") << "\nreplot\nunset output\n";
    const std::string script_file = (fs::path(dir) / (figure.name + ".gp")).string();
    util::write_file_atomic(script_file, gp.str());
    RenderedFigure out{figure.name, figure.caption, (fs::path(dir) / (figure.name + ".svg")).string(),
                       (fs::path(dir) / (figure.name + ".png")).string(), figure.width};
    fs::remove(out.svg_file);
    fs::remove(out.png_file);
    const ProcessResult r = run_program({gnuplot_program(), figure.name + ".gp"}, dir);
    if (!r.started)
        throw std::runtime_error(script_file + ": gnuplot could not be run: " + r.stderr_text +
                                 " (install gnuplot-nox: scripts/setup_debian.sh, or set CLASSWISE_GNUPLOT)");
    if (r.exit_code != 0 || !fs::exists(out.svg_file) || fs::file_size(out.svg_file) == 0)
        throw std::runtime_error(script_file + ": gnuplot failed: " + first_error_line(r.stderr_text));
    return out;
}

}  // namespace cw::report
