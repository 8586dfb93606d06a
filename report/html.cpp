#include "report/html.h"

#include <cmath>
#include <filesystem>
#include <iomanip>
#include <sstream>

#include "util/atomic_file.h"
#include "util/format.h"

namespace cw::report {

std::string html_escape(const std::string& text) {
    std::string out;
    for (char c : text) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&#39;"; break;
            default: out += c;
        }
    }
    return out;
}

std::string base64(const std::string& bytes) {
    static const char* digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    size_t i = 0;
    for (; i + 2 < bytes.size(); i += 3) {
        const uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8) | uint8_t(bytes[i + 2]);
        for (int s = 18; s >= 0; s -= 6) out += digits[(v >> s) & 63];
    }
    if (i < bytes.size()) {
        const bool two = i + 1 < bytes.size();
        const uint32_t v = (uint8_t(bytes[i]) << 16) | (two ? uint8_t(bytes[i + 1]) << 8 : 0);
        out += digits[(v >> 18) & 63];
        out += digits[(v >> 12) & 63];
        out += two ? digits[(v >> 6) & 63] : '=';
        out += '=';
    }
    return out;
}

std::string html_figure(const RenderedFigure& figure, const std::string& page_dir) {
    namespace fs = std::filesystem;
    const std::string svg = util::read_file_text(figure.svg_file);
    const std::string svg_link = fs::relative(figure.svg_file, page_dir).string();
    const std::string png_link = fs::relative(figure.png_file, page_dir).string();
    std::ostringstream os;
    os << "<figure id=\"fig-" << html_escape(figure.name) << "\">\n<img src=\"data:image/svg+xml;base64,"
       << base64(svg) << "\" width=\"" << figure.width << "\" alt=\"" << html_escape(figure.caption) << "\">\n<figcaption>"
       << html_escape(figure.caption) << " <span class=\"files\">(<a href=\"" << html_escape(svg_link)
       << "\">SVG</a> · <a href=\"" << html_escape(png_link) << "\">PNG</a>)</span></figcaption>\n</figure>\n";
    return os.str();
}

std::string html_table(const HtmlTable& t) {
    std::ostringstream os;
    os << "<table>\n";
    if (!t.caption.empty()) os << "<caption>" << html_escape(t.caption) << "</caption>\n";
    bool header = false;
    for (const auto& h : t.header) header |= !h.empty();
    if (header) {
        os << "<thead><tr>";
        for (const auto& h : t.header) os << "<th>" << html_escape(h) << "</th>";
        os << "</tr></thead>\n";
    }
    os << "<tbody>\n";
    for (size_t r = 0; r < t.rows.size(); ++r) {
        os << "<tr>";
        for (size_t c = 0; c < t.rows[r].size(); ++c) {
            const std::string cls = r < t.classes.size() && c < t.classes[r].size() ? t.classes[r][c] : "";
            os << (cls.empty() ? "<td>" : "<td class=\"" + cls + "\">") << t.rows[r][c] << "</td>";
        }
        os << "</tr>\n";
    }
    os << "</tbody>\n</table>\n";
    return os.str();
}

std::string html_page(const std::string& title, const std::string& body) {
    return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" + html_escape(title) +
           "</title>\n<style>\n"
           "body{font-family:system-ui,sans-serif;max-width:1280px;margin:2em auto;padding:0 1em;color:#222}\n"
           "h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}\n"
           "table{border-collapse:collapse;margin:1em 0;font-size:.92em}\n"
           "th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left}th{background:#f2f2f2}\n"
           "td.num{text-align:right;font-variant-numeric:tabular-nums}\n"
           "td.worst{background:#fbe3e6;font-weight:bold}td.best{background:#e3f0e3}\n"
           "caption{text-align:left;font-weight:bold;margin-bottom:.3em}\n"
           "figure{margin:1.5em 0}figure img{max-width:100%;border:1px solid #eee}\n"
           "figcaption{font-size:.9em;color:#444}.files{color:#888}\n"
           "pre{background:#f7f7f7;padding:.8em;overflow-x:auto;font-size:.85em}\n"
           ".note{background:#fff6d6;padding:.5em .8em;border-left:4px solid #e0b000}\n"
           "</style>\n</head>\n<body>\n" + body + "</body>\n</html>\n";
}

}  // namespace cw::report
