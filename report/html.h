#pragma once
// The pieces of a self-contained HTML page: escaping, inline figures (the SVG embedded as a data: URI, so the page
// needs no other file, with links to the SVG and PNG beside it), tables and the page frame with its style sheet.
#include <string>
#include <vector>

#include "report/gnuplot.h"

namespace cw::report {

// &, <, >, " and ' as entities: safe in text and in attribute values.
std::string html_escape(const std::string& text);
std::string base64(const std::string& bytes);

// <figure> with the SVG inline and links to the files (relative to `page_dir`).
std::string html_figure(const RenderedFigure& figure, const std::string& page_dir);

struct HtmlTable {
    std::vector<std::string> header;                 // plain text (escaped when written)
    std::vector<std::vector<std::string>> rows;      // cells as HTML (escape text with html_escape first)
    std::vector<std::vector<std::string>> classes;   // optional CSS class per cell ("worst", "best", "num")
    std::string caption;
};
std::string html_table(const HtmlTable& table);

// A whole page: <!DOCTYPE html>, the title, the style sheet, `body`.
std::string html_page(const std::string& title, const std::string& body);

}  // namespace cw::report
