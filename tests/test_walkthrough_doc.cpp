// docs/walkthrough.md shows commands with their real output. This test keeps it current: it runs every ```sh block
// (from the repository root, in document order, since later commands read what earlier ones wrote) through /bin/sh
// with stderr joined to stdout, and checks that what it prints makes the claims of the ```output block that follows:
//   - the same lines, in the same order, with the same words: op names, headers, file names;
//   - every whole number (a shape, a count, an index) exactly, every other number within the tolerance the block
//     states in its fence, "```output rel=R abs=A lines=L classes=C words=W": |now - doc| <= A + R * max(|now|, |doc|), and the
//     same class names (a prediction, a worst class);
//   - except on at most L lines with numbers beyond that ("lines=L"), C lines that name another class ("classes=C":
//     what one image flips) and W lines with other words ("words=W": a trainer's "new best" mark, which follows
//     the numbers); all three are 0 unless the fence says otherwise.
// The layout of the digits is no claim: runs of spaces count as one, so a column padded for a wider number on
// another CPU still agrees. What differs between two runs on one machine is masked before comparing: durations as
// the tools print them ("12.4 s", "3m 07s", "1h 02m") and throughput ("86.2 img/s"), whitespace at the end of a line,
// blank lines at the end of an output (editors strip them).
// The tolerances are the doc's, measured: OpenBLAS picks its kernels (and so its summation order) by CPU, and the
// training runs carry a last-bit difference into the printed digits; the "Keeping this page current" section says
// how far each block moved under every kernel set OpenBLAS offers. On a mismatch the failure shows the command, the
// lines that disagree and why, and how to refresh: tools/refresh_walkthrough.sh.
#include <catch2/catch.hpp>

#include "tests/test_process.h"

#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "datasets/class_names.h"
#include "tests/skip.h"

namespace fs = std::filesystem;

namespace {

// The repository root: the test binary is <root>/build/tests/classwise_tests.
using cw_test::repo_root;

// What an output block promises about the numbers in it (see the header comment).
struct Tolerance {
    double rel = 0, abs = 0;
    int lines = 0;     // lines that may hold numbers beyond rel and abs
    int classes = 0;   // lines that may name another class (a prediction, a worst class)
    int words = 0;     // lines that may show other words (a trainer's "new best" mark that follows the numbers)
};

struct Example {
    int line = 0;           // of the ```sh fence, for messages
    std::string command;
    std::string output;
    Tolerance tolerance;
};

// "```output" or "```output rel=0.1 abs=1 lines=5 classes=2 words=1"; false for any other line. An unknown key or a value that is not
// a number is an error naming the doc line, so a typo cannot loosen a block silently.
bool parse_output_fence(const std::string& line, int n, Tolerance& t) {
    const std::string fence = "```output";
    if (line.rfind(fence, 0) != 0 || (line.size() > fence.size() && line[fence.size()] != ' ')) return false;
    t = {};
    std::istringstream words(line.substr(fence.size()));
    std::string word;
    while (words >> word) {
        const size_t eq = word.find('=');
        const std::string key = word.substr(0, eq), value = eq == std::string::npos ? "" : word.substr(eq + 1);
        const auto where = "docs/walkthrough.md:" + std::to_string(n) + ": ";
        char* end = nullptr;
        const double v = std::strtod(value.c_str(), &end);
        if (value.empty() || *end != '\0' || v < 0)
            throw std::runtime_error(where + "'" + word + "': expected rel=, abs=, lines=, classes= or words= with a number >= 0");
        if (key == "rel") t.rel = v;
        else if (key == "abs") t.abs = v;
        else if (key == "lines" && v == static_cast<int>(v)) t.lines = static_cast<int>(v);
        else if (key == "classes" && v == static_cast<int>(v)) t.classes = static_cast<int>(v);
        else if (key == "words" && v == static_cast<int>(v)) t.words = static_cast<int>(v);
        else throw std::runtime_error(where + "'" + word + "': expected rel=R, abs=A, lines=L, classes=C or words=W (L, C, W whole)");
    }
    return true;
}

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
            if (line == "```sh") out.push_back({n, "", "", {}}), state = Command;
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
            if (parse_output_fence(line, n, out.back().tolerance)) state = Output;
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


// A line as a claim: its words (the text with every number replaced by '#', every Fashion-MNIST class name by
// '<class>' and every run of spaces by one space), its numbers, each with whether it was written as a whole number,
// and its class names. The doc's commands all run on Fashion-MNIST; a class name is a prediction or a worst class,
// which one image can flip on another CPU, while every other word (an op, a header, a file name) is the code's.
struct Number {
    std::string text;
    double value = 0;
    bool whole = false;
};
struct Claim {
    std::string words;
    std::vector<Number> numbers;
    std::vector<std::string> classes;
};

Claim claim_of(const std::string& line) {
    static const std::regex number(R"([-+]?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?)");
    static const std::regex class_name = [] {
        std::vector<std::string> names = cw::data::fashion_mnist_class_names();
        std::sort(names.begin(), names.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
        std::string alternatives;   // longest first; no name holds a character special to a regex
        for (const auto& n : names) alternatives += (alternatives.empty() ? "" : "|") + n;
        return std::regex("\\b(" + alternatives + ")\\b");
    }();
    Claim c;
    std::string text, rest;
    size_t last = 0;
    for (auto it = std::sregex_iterator(line.begin(), line.end(), class_name); it != std::sregex_iterator(); ++it) {
        rest += line.substr(last, it->position() - last) + "<class>";
        last = it->position() + it->length();
        c.classes.push_back(it->str());
    }
    rest += line.substr(last);
    last = 0;
    for (auto it = std::sregex_iterator(rest.begin(), rest.end(), number); it != std::sregex_iterator(); ++it) {
        text += rest.substr(last, it->position() - last) + "#";
        last = it->position() + it->length();
        const std::string t = it->str();
        c.numbers.push_back({t, std::stod(t), t.find_first_of(".eE") == std::string::npos});
    }
    text += rest.substr(last);
    std::istringstream words(text);
    std::string w;
    while (words >> w) c.words += (c.words.empty() ? "" : " ") + w;
    return c;
}

// Why the line printed now does not make the doc line's claim, or "" when it does; `kind` says which allowance of
// the block it draws on.
enum class Kind { Numbers, Classes, Words };
std::string disagreement(const std::string& doc, const std::string& now, const Tolerance& t, Kind* kind = nullptr) {
    const Claim a = claim_of(doc), b = claim_of(now);
    Kind k = Kind::Numbers;
    if (kind) *kind = k;
    if (a.words != b.words || a.numbers.size() != b.numbers.size()) {
        if (kind) *kind = Kind::Words;
        return "other words";
    }
    if (a.classes != b.classes) {
        if (kind) *kind = Kind::Classes;
        return "another class";
    }
    for (size_t i = 0; i < a.numbers.size(); ++i) {
        const Number &x = a.numbers[i], &y = b.numbers[i];
        if (x.whole && y.whole) {
            if (x.value != y.value) return "whole number " + x.text + " is now " + y.text;
        } else if (std::abs(x.value - y.value) > t.abs + t.rel * std::max(std::abs(x.value), std::abs(y.value))) {
            std::ostringstream why;
            why << x.text << " is now " << y.text << ", beyond abs " << t.abs << " + rel " << t.rel;
            return why.str();
        }
    }
    return "";
}

// "" when the output makes the doc's claims within the block's tolerance, else what to show: up to `lines` lines
// may hold numbers beyond rel and abs, `classes` lines may name another class, `words` lines may show other words
// (by default none: a renamed op or header is the code's change, not a CPU's).
std::string compare_output(const std::vector<std::string>& doc, const std::vector<std::string>& now,
                           const Tolerance& t) {
    if (doc.size() != now.size())
        return "it prints " + std::to_string(now.size()) + " lines where the doc shows " + std::to_string(doc.size()) +
               " (- doc, + now):\n" + line_diff(doc, now);
    std::string out;
    int numbers = 0, classes = 0, words = 0;
    for (size_t i = 0; i < doc.size(); ++i) {
        Kind kind = Kind::Numbers;
        if (const std::string why = disagreement(doc[i], now[i], t, &kind); !why.empty()) {
            ++(kind == Kind::Words ? words : kind == Kind::Classes ? classes : numbers);
            out += "- " + doc[i] + "\n+ " + now[i] + "\n  (" + why + ")\n";
        }
    }
    if (numbers <= t.lines && classes <= t.classes && words <= t.words) return "";
    return "lines that disagree: " + std::to_string(numbers) + " in numbers (the block allows " + std::to_string(t.lines) +
           "), " + std::to_string(classes) + " in classes (" + std::to_string(t.classes) + "), " + std::to_string(words) +
           " in other words (" + std::to_string(t.words) + ") (- doc, + now):\n" + out;
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
    CHECK_THROWS_WITH(parse_examples("```sh\necho hi\n```\n```outputs\nhi\n```\n"),
                      Catch::Contains("must be followed by an ```output block"));
}

TEST_CASE("walkthrough doc: an output fence states the block's tolerance", "[docs]") {
    const auto e = parse_examples("```sh\necho hi\n```\n```output rel=0.1 abs=1 lines=5 classes=3 words=2\nhi\n```\n"
                                  "```sh\necho 2\n```\n```output\n2\n```\n");
    REQUIRE(e.size() == 2);
    CHECK(e[0].tolerance.rel == 0.1);
    CHECK(e[0].tolerance.abs == 1);
    CHECK(e[0].tolerance.lines == 5);
    CHECK(e[0].tolerance.classes == 3);
    CHECK(e[0].tolerance.words == 2);
    CHECK(e[1].tolerance.rel == 0);   // no statement: every number exactly as printed
    CHECK(e[1].tolerance.lines == 0);
    // A typo must not loosen a block silently.
    CHECK_THROWS_WITH(parse_examples("```sh\necho hi\n```\n```output rel=0.1 line=5\nhi\n```\n"),
                      Catch::Contains("docs/walkthrough.md:4: 'line=5'"));
    CHECK_THROWS_WITH(parse_examples("```sh\necho hi\n```\n```output rel=ten\nhi\n```\n"),
                      Catch::Contains("'rel=ten'"));
    CHECK_THROWS_WITH(parse_examples("```sh\necho hi\n```\n```output lines=1.5\nhi\n```\n"),
                      Catch::Contains("'lines=1.5'"));
}

TEST_CASE("walkthrough doc: the comparison checks claims, not the layout of digits", "[docs]") {
    const Tolerance exact{}, loose{0.1, 0.01};
    // The line the issue saw on a Zen 4: the same claim padded for a number one digit wider.
    CHECK(disagreement("  1   relu           0.1307         0.09867", "  1   relu           0.1307          0.0986",
                       Tolerance{0.01, 0}) == "");
    CHECK(disagreement("#   relu           #        #", "#   relu           #         #", exact) == "");
    // Words, shapes and counts are claims too.
    CHECK(disagreement("  1   relu    [8, 32, 26, 26]", "  1   relu6   [8, 32, 26, 26]", loose) == "other words");
    CHECK(disagreement("  1   relu    [8, 32, 26, 26]", "  1   relu    [8, 32, 26, 27]", loose) ==
          "whole number 26 is now 27");
    CHECK(disagreement("  1   relu    [8, 32, 26, 26]", "  1   relu    [8, 32, 26]", loose) == "other words");
    // A class name is a prediction: another one is a disagreement the block's `lines` may allow, not other words.
    CHECK(disagreement("  5      Pullover     Pullover        Coat", "  5      Pullover     Coat            Coat", loose) ==
          "another class");
    CHECK(disagreement("  0      Ankle boot   Ankle boot      Ankle boot", "  0      Ankle boot   Bag  Ankle boot", loose) ==
          "another class");
    CHECK(disagreement("(worst class T-shirt/top 0.0%)", "(worst class Shirt 0.0%)", loose) == "another class");
    // A number within abs + rel * max(|doc|, |now|) agrees; one outside does not. By hand: 1.08 -> 1.20 is 0.12 off,
    // allowed 0.01 + 0.1 * 1.20 = 0.13; 1.08 -> 1.22 is 0.14 off, allowed 0.132.
    CHECK(disagreement("loss 1.0800", "loss 1.2000", loose) == "");
    CHECK(disagreement("loss 1.0800", "loss 1.2200", loose) == "1.0800 is now 1.2200, beyond abs 0.01 + rel 0.1");
    CHECK(disagreement("loss 1.0800", "loss 1.08", exact) == "");   // the same number, written shorter
    CHECK(disagreement("loss -0.27", "loss 0.27", loose) != "");
    CHECK(disagreement("eps 5e-4", "eps 0.0005", exact) == "");
    // A block: the same number of lines, at most `lines` of them disagreeing.
    const std::vector<std::string> doc{"a 1.0", "b 2", "c 3.0"}, one_off{"a 1.0", "b 3", "c 3.0"};
    CHECK(compare_output(doc, doc, exact).empty());
    CHECK_THAT(compare_output(doc, one_off, exact), Catch::Contains("1 in numbers (the block allows 0)"));
    CHECK(compare_output(doc, one_off, Tolerance{0, 0, 1}).empty());
    const std::vector<std::string> pred{"  5   Pullover   Coat"}, pred_now{"  5   Pullover   Bag"};
    CHECK_THAT(compare_output(pred, pred_now, Tolerance{0, 0, 3}), Catch::Contains("1 in classes (0)"));
    CHECK(compare_output(pred, pred_now, Tolerance{0, 0, 0, 1}).empty());
    // Other words fail whatever the numbers may do, unless the block allows them: a renamed op is the code's change.
    CHECK_THAT(compare_output({"10  reshape  [8, 64, 4, 4]"}, {"10  flatten  [8, 64, 4, 4]"}, Tolerance{0.5, 1, 9, 9, 0}),
               Catch::Contains("1 in other words (0)"));
    CHECK(compare_output({"test: clean 39.0%  new best robust"}, {"test: clean 39.0%"}, Tolerance{0, 0, 0, 0, 1}).empty());
    CHECK_THAT(compare_output(doc, {"a 1.0", "c 3.0"}, Tolerance{0, 0, 5}), Catch::Contains("prints 2 lines"));
}

TEST_CASE("walkthrough doc: every command prints what docs/walkthrough.md shows", "[docs]") {
    if (!fs::exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"))
        CW_SKIP("Fashion-MNIST not found in /usr/share/datasets (apt-get install dataset-fashion-mnist)");
    const fs::path doc = repo_root() / "docs/walkthrough.md";
    REQUIRE(fs::exists(doc));
    const std::string text = read_text(doc);
    const std::vector<Example> examples = parse_examples(text);
    REQUIRE(examples.size() >= 3);   // the tape, the step audit, the Gaussian example at least
    for (const Example& e : examples) {
        INFO("docs/walkthrough.md:" << e.line << ":\n" << e.command);
        const Run r = run_in_root(e.command);
        INFO("exit code " << r.code);
        if (const std::string why = compare_output(normalise(e.output), normalise(r.text), e.tolerance); !why.empty())
            FAIL_CHECK("its output does not make the doc's claims (after masking timings): " << why
                       << "If the change is intended, refresh the doc with tools/refresh_walkthrough.sh (after make) "
                          "and review it with git diff docs/walkthrough.md.");
        CHECK(r.code == 0);
    }
}
