// docs/walkthrough.md shows commands with their real output. This test keeps it current: it runs every ```sh block
// (from the repository root, in document order, since later commands read what earlier ones wrote) through /bin/sh
// with stderr joined to stdout, and compares what it prints with the ```output block that follows, after
// normalising only what differs between two runs of the same command on the same machine:
//   - durations as the tools print them (util::format_duration and the "in 0.2 s" lines): "12.4 s", "3m 07s",
//     "1h 02m" become "<time>";
//   - throughput: "86.2 img/s" becomes "<rate> img/s";
//   - whitespace at the end of a line, and blank lines at the end of an output (editors strip them).
// Everything else must match exactly: losses, accuracies, gradient norms, shapes, file names. The commands write
// under runs/walkthrough/ (relative to the root), so no temporary path appears in their output.
// On a mismatch the failure shows the command, a line diff and how to refresh: tools/refresh_walkthrough.sh.
// The digits are exact only on the CPU model they were recorded on (OpenBLAS picks its kernels, and so its
// summation order, by CPU; a training run carries a last-bit difference into the printed digits). The doc names
// that CPU in a "<!-- outputs recorded on: ... -->" line, which the refresh script writes. On another CPU the
// test checks what does not depend on rounding — the same lines with every number masked — and is then counted as
// skipped for the digits, saying which CPU recorded them.
#include <catch2/catch.hpp>

#include "tests/test_process.h"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/skip.h"

namespace fs = std::filesystem;

namespace {

// The repository root: the test binary is <root>/build/tests/classwise_tests.
using cw_test::repo_root;

struct Example {
    int line = 0;           // of the ```sh fence, for messages
    std::string command;
    std::string output;
};

// Every ```sh block and the ```output block after it (only blank lines may come between). Other fenced blocks are
// prose; a ```sh block without its output block is an error, so an example cannot silently go unchecked.
std::vector<Example> parse_examples(const std::string& doc) {
    std::vector<Example> out;
    std::istringstream in(doc);
    std::string line;
    int n = 0;
    enum { Text, Command, AwaitOutput, Output, Other } state = Text;
    while (std::getline(in, line)) {
        ++n;
        switch (state) {
        case Text:
            if (line == "```sh") out.push_back({n, "", ""}), state = Command;
            else if (line.rfind("```", 0) == 0) state = Other;
            break;
        case Other:
            if (line == "```") state = Text;
            break;
        case Command:
            if (line == "```") state = AwaitOutput;
            else out.back().command += line + "\n";
            break;
        case AwaitOutput:
            if (line == "```output") state = Output;
            else if (line.find_first_not_of(" \t") != std::string::npos)
                throw std::runtime_error("docs/walkthrough.md:" + std::to_string(n) + ": the command at line " +
                                         std::to_string(out.back().line) + " must be followed by an ```output block");
            break;
        case Output:
            if (line == "```") state = Text;
            else out.back().output += line + "\n";
            break;
        }
    }
    if (state == Command || state == AwaitOutput || state == Output)
        throw std::runtime_error("docs/walkthrough.md: the example at line " + std::to_string(out.back().line) +
                                 " is not closed by its ```output block");
    return out;
}

// See the header comment: the only differences two runs may show.
std::vector<std::string> normalise(const std::string& text) {
    static const std::regex rate(R"(\b[0-9]+(\.[0-9]+)? img/s\b)");
    static const std::regex time(R"(\b([0-9]+(\.[0-9]+)? s|[0-9]+m [0-9]{2}s|[0-9]+h [0-9]{2}m)\b)");
    std::vector<std::string> lines;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        line = std::regex_replace(line, rate, "<rate> img/s");
        line = std::regex_replace(line, time, "<time>");
        line.erase(line.find_last_not_of(" \t\r") + 1);
        lines.push_back(line);
    }
    while (!lines.empty() && lines.back().empty()) lines.pop_back();
    return lines;
}

// A unified-style diff ("-" in the doc, "+" now) with two lines of context, at most `max_lines` lines.
std::string line_diff(const std::vector<std::string>& a, const std::vector<std::string>& b, size_t max_lines = 40) {
    const size_t n = a.size(), m = b.size();
    std::vector<std::vector<int>> lcs(n + 1, std::vector<int>(m + 1, 0));
    for (size_t i = n; i-- > 0;)
        for (size_t j = m; j-- > 0;)
            lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
    std::vector<std::string> ops;   // "  x", "- x", "+ x"
    size_t i = 0, j = 0;
    while (i < n || j < m) {
        if (i < n && j < m && a[i] == b[j]) ops.push_back("  " + a[i]), ++i, ++j;
        else if (i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1])) ops.push_back("- " + a[i++]);
        else ops.push_back("+ " + b[j++]);
    }
    std::vector<bool> show(ops.size(), false);
    for (size_t k = 0; k < ops.size(); ++k)
        if (ops[k][0] != ' ')
            for (size_t c = k >= 2 ? k - 2 : 0; c <= std::min(ops.size() - 1, k + 2); ++c) show[c] = true;
    std::string out;
    size_t lines = 0;
    for (size_t k = 0; k < ops.size() && lines < max_lines; ++k) {
        if (!show[k]) continue;
        if (k > 0 && !show[k - 1] && !out.empty()) out += "  ...\n";
        out += ops[k] + "\n", ++lines;
    }
    if (lines == max_lines) out += "  ... (diff cut at " + std::to_string(max_lines) + " lines)\n";
    return out;
}

using Run = cw_test::CommandOutput;

Run run_in_root(const std::string& command) {
    return cw_test::run_shell("cd '" + repo_root().string() + "' && ( " + command + " ) 2>&1 < /dev/null");
}

std::string read_text(const fs::path& p) {
    std::ifstream in(p);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}


// "AuthenticAMD family 26 model 2": the CPU as /proc/cpuinfo names it (the same fields the refresh script reads).
std::string cpu_fingerprint() {
    std::ifstream in("/proc/cpuinfo");
    std::string line, vendor, family, model;
    auto value = [](const std::string& l) { return l.substr(l.find(':') + 2); };
    while (std::getline(in, line) && (vendor.empty() || family.empty() || model.empty())) {
        if (line.rfind("vendor_id", 0) == 0) vendor = value(line);
        else if (line.rfind("cpu family", 0) == 0) family = value(line);
        else if (line.rfind("model\t", 0) == 0) model = value(line);
    }
    return vendor + " family " + family + " model " + model;
}

std::string recorded_fingerprint(const std::string& doc) {
    static const std::regex line(R"(<!-- outputs recorded on: (.*) -->)");
    std::smatch m;
    return std::regex_search(doc, m, line) ? m[1].str() : "";
}

// The lines with every number masked: what another CPU must still print.
std::vector<std::string> skeleton(const std::vector<std::string>& lines) {
    static const std::regex number(R"([-+]?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?)");
    std::vector<std::string> out;
    for (const std::string& l : lines) out.push_back(std::regex_replace(l, number, "#"));
    return out;
}

}  // namespace

TEST_CASE("walkthrough doc: the normalisation hides timings and throughput, nothing else", "[docs]") {
    const auto a = normalise("epoch 1/2  batch 10/10  loss 2.2973  acc 13.00%  90.6 img/s  ETA 5.5 s\n"
                             "  K2_natural: 10 epochs in 0.1 s, final loss 0.0011  \n"
                             "took 3m 07s, then 1h 02m\n\n\n");
    const auto b = normalise("epoch 1/2  batch 10/10  loss 2.2973  acc 13.00%  107 img/s  ETA 12.0 s\n"
                             "  K2_natural: 10 epochs in 2.4 s, final loss 0.0011\n"
                             "took 4m 59s, then 2h 00m\n");
    CHECK(a == b);
    CHECK(a[0] == "epoch 1/2  batch 10/10  loss 2.2973  acc 13.00%  <rate> img/s  ETA <time>");
    // A loss, an accuracy, a count or a norm that changes is a difference.
    CHECK(normalise("loss 2.2973") != normalise("loss 2.2974"));
    CHECK(normalise("acc 13.00%") != normalise("acc 13.01%"));
    CHECK(normalise("10 epochs") != normalise("11 epochs"));
    CHECK(normalise("  0   conv2d   0.09651") != normalise("  0   conv2d   0.09652"));
    CHECK(normalise("runs/walkthrough/fair_tat/steps.csv") != normalise("runs/walkthrough/other/steps.csv"));
}

TEST_CASE("walkthrough doc: a command without its output block is an error", "[docs]") {
    CHECK(parse_examples("text\n```sh\necho hi\n```\n\n```output\nhi\n```\n```cpp\nint x;\n```\n").size() == 1);
    CHECK_THROWS_WITH(parse_examples("```sh\necho hi\n```\nprose\n```output\nhi\n```\n"),
                      Catch::Contains("line 1 must be followed by an ```output block"));
    CHECK_THROWS_WITH(parse_examples("```sh\necho hi\n```\n"), Catch::Contains("not closed"));
}

TEST_CASE("walkthrough doc: every command prints what docs/walkthrough.md shows", "[docs]") {
    if (!fs::exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"))
        CW_SKIP("Fashion-MNIST not found in /usr/share/datasets (apt-get install dataset-fashion-mnist)");
    const fs::path doc = repo_root() / "docs/walkthrough.md";
    REQUIRE(fs::exists(doc));
    const std::string text = read_text(doc);
    const std::vector<Example> examples = parse_examples(text);
    REQUIRE(examples.size() >= 3);   // the tape, the step audit, the Gaussian example at least
    const std::string here = cpu_fingerprint(), recorded = recorded_fingerprint(text);
    REQUIRE(!recorded.empty());
    const bool exact = here == recorded;
    for (const Example& e : examples) {
        INFO("docs/walkthrough.md:" << e.line << ":\n" << e.command);
        const Run r = run_in_root(e.command);
        const auto want = normalise(e.output), got = normalise(r.text);
        INFO("exit code " << r.code);
        if (exact ? want != got : skeleton(want) != skeleton(got))
            FAIL_CHECK("its output differs from the doc (- doc, + now, after normalising timings"
                       << (exact ? "" : " and masking numbers: this CPU is not the one that recorded the digits")
                       << "):\n" << line_diff(exact ? want : skeleton(want), exact ? got : skeleton(got))
                       << "If the change is intended, refresh the doc with tools/refresh_walkthrough.sh (after make) "
                          "and review it with git diff docs/walkthrough.md.");
        CHECK(r.code == 0);
    }
    if (!exact)
        CW_SKIP("the doc's digits were recorded on " + recorded + ", this is " + here +
                ": only the output with numbers masked was compared");
}
