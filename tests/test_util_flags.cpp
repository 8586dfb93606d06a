// The command-line facade (util/flags.h): values land in their targets, each check refuses what it should in one
// line naming the flag, enum names map to their values, and the helpers the binaries build on (presets, the given
// flags as tokens, repeated flags, unknown arguments) behave as documented.
#include <catch2/catch.hpp>

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "util/flags.h"

using cw::cli::FlagError;
using cw::cli::FlagSet;

namespace {

enum class Form { Original = 3, Cfa = 7 };

// argv from words, the program name first.
void parse(FlagSet& flags, std::vector<std::string> words) {
    words.insert(words.begin(), "prog");
    std::vector<const char*> argv;
    for (const std::string& w : words) argv.push_back(w.c_str());
    flags.parse(static_cast<int>(argv.size()), argv.data());
}

std::string parse_error(FlagSet& flags, const std::vector<std::string>& words) {
    try {
        parse(flags, words);
    } catch (const FlagError& e) {
        return e.what();
    }
    return "(no error)";
}

}  // namespace

TEST_CASE("flags: each option type lands in its target; an option not given keeps its value", "[flags]") {
    FlagSet flags{"test"};
    int64_t epochs = 5;
    uint64_t seed = 0;
    double lr = 0.1;
    float beta = 6.f;
    std::string out = "runs/x";
    std::vector<std::string> attacks;
    bool resume = false, random_start = true, quick = false;
    flags.option("--epochs", epochs, "");
    flags.option("--seed", seed, "");
    flags.option("--lr", lr, "");
    flags.option("--beta", beta, "");
    flags.option("--out", out, "");
    flags.option("--attacks", attacks, "").list_separator(',');
    flags.flag("--resume", resume, "");
    flags.flag("!--no-random-start", random_start, "");
    flags.flag("--quick", quick, "");
    parse(flags, {"--epochs", "12", "--seed", "42", "--lr", "0.25", "--attacks", "clean,pgd20", "--attacks", "cw20",
                  "--resume", "--no-random-start"});
    CHECK(epochs == 12);
    CHECK(seed == 42);
    CHECK(lr == 0.25);
    CHECK(beta == 6.f);             // not given
    CHECK(out == "runs/x");         // not given
    CHECK(attacks == std::vector<std::string>{"clean", "pgd20", "cw20"});
    CHECK(resume);
    CHECK_FALSE(random_start);
    CHECK_FALSE(quick);
    CHECK(flags.get("--epochs").given());
    CHECK_FALSE(flags.get("--beta").given());
    CHECK(flags.get("--lr").last_value() == "0.25");
}

TEST_CASE("flags: range, one_of and a bad number are one-line errors naming the flag", "[flags]") {
    FlagSet flags{"test"};
    int64_t steps = 10;
    double lr = 0.1;
    std::string device = "auto";
    flags.option("--steps", steps, "").range(int64_t{1}, int64_t{100});
    flags.option("--lr", lr, "").range(0.0, 1.0);
    flags.option("--device", device, "").one_of({"auto", "cpu", "cuda"});
    FlagSet f1{"t"}, f2{"t"}, f3{"t"}, f4{"t"};
    for (FlagSet* f : {&f1, &f2, &f3, &f4}) {
        f->option("--steps", steps, "").range(int64_t{1}, int64_t{100});
        f->option("--lr", lr, "").range(0.0, 1.0);
        f->option("--device", device, "").one_of({"auto", "cpu", "cuda"});
    }
    // Integer bounds print as integers, real ones as CLI11's to_string does.
    CHECK(parse_error(f1, {"--steps", "0"}) == "--steps: Value 0 not in range 1 to 100");
    CHECK(parse_error(f2, {"--lr", "1.5"}) == "--lr: Value 1.5 not in range 0.000000 to 1.000000");
    CHECK(parse_error(f3, {"--device", "gpu"}) == "--device: gpu not in {auto,cpu,cuda}");
    CHECK(parse_error(f4, {"--steps", "ten"}) == "--steps: Value ten not in range 1 to 100");
    // An unsigned number: CLI11 alone would read -1 as 2^64 - 1.
    FlagSet f5{"t"};
    uint64_t seed = 7;
    f5.option("--seed", seed, "");
    CHECK(parse_error(f5, {"--seed", "-1"}) == "--seed: expected a whole number >= 0, got '-1'");
    CHECK(seed == 7);
    // NaN compares false with both bounds, so CLI11's range alone let --lr nan through (a run then diverged at its
    // first step).
    for (const char* nan : {"nan", "NaN", "-nan"}) {
        FlagSet f{"t"};
        double rate = 0.1;
        f.option("--lr", rate, "").range(0.0, 1.0);
        CHECK(parse_error(f, {"--lr", nan}) == std::string("--lr: expected a number, got '") + nan + "'");
        CHECK(rate == 0.1);
    }
    // An empty folder name would write a run's folders into the working directory.
    FlagSet f6{"t"};
    std::string out = "runs/x";
    f6.option("--out", out, "").non_empty();
    CHECK(parse_error(f6, {"--out", ""}) == "--out: expected a value, got an empty one");
    CHECK(out == "runs/x");
    parse(flags, {"--steps", "100", "--lr", "0", "--device", "cpu"});   // the bounds themselves are inside
    CHECK(steps == 100);
    CHECK(lr == 0.0);
    CHECK(device == "cpu");
}

TEST_CASE("flags: an enum by name, any case; a bad name lists the names", "[flags]") {
    const std::map<std::string, Form> forms{{"original", Form::Original}, {"cfa", Form::Cfa}};
    Form form = Form::Original;
    FlagSet flags{"test"};
    flags.option("--form", form, "").choice(forms, "original|cfa");
    parse(flags, {"--form", "CFA"});
    CHECK(form == Form::Cfa);
    FlagSet bad{"test"};
    Form other = Form::Cfa;
    bad.option("--form", other, "").choice(forms, "original|cfa");
    CHECK(parse_error(bad, {"--form", "zhang"}) == "--form: expected one of original|cfa, got 'zhang'");
    CHECK(other == Form::Cfa);
    // The default shown in --print-config is the enum's number, as CLI11 shows an enum target.
    FlagSet shown{"test"};
    Form third = Form::Cfa;
    shown.option("--form", third, "").choice(forms, "original|cfa").show_default();
    parse(shown, {});
    CHECK(shown.config_text() == "form=7\n");
}

TEST_CASE("flags: a preset value goes through the flag's checks; a flag given keeps its value", "[flags]") {
    FlagSet flags{"test"};
    int64_t n = 0;
    flags.option("--n", n, "").range(int64_t{1}, int64_t{1000});
    parse(flags, {});
    flags.get("--n").apply("500");
    CHECK(n == 500);
    CHECK(flags.get("--n").given());
    FlagSet refused{"test"};
    int64_t m = 3;
    refused.option("--n", m, "").range(int64_t{1}, int64_t{1000});
    parse(refused, {});
    CHECK_THROWS_AS(refused.get("--n").apply("0"), FlagError);
    CHECK_THROWS_AS(refused.get("--missing"), std::logic_error);
}

TEST_CASE("flags: given_tokens returns the flags given from one option on, to parse again elsewhere", "[flags]") {
    FlagSet flags{"test"};
    std::string out;
    double lr = 0;
    bool resume = false;
    int64_t epochs = 1;
    std::vector<std::string> list;
    flags.option("--out", out, "");
    const size_t first = flags.size();
    flags.option("--lr", lr, "");
    flags.flag("--resume", resume, "");
    flags.option("--epochs", epochs, "");
    flags.option("--list", list, "");
    const size_t end = flags.size();
    std::string grid;
    flags.option("--grid", grid, "");
    parse(flags, {"--out", "o", "--list", "a", "--lr", "0.5", "--grid", "g", "--resume", "--list", "b"});
    // In the options' order; a switch is one token; a list option is one pair per value; --out and --grid are
    // outside [first, end).
    CHECK(flags.given_tokens(first, end) ==
          std::vector<std::string>{"--lr", "0.5", "--resume", "--list", "a", "--list", "b"});
    CHECK(flags.given_tokens(0, flags.size()) == std::vector<std::string>{"--out", "o", "--lr", "0.5", "--resume", "--list",
                                                                           "a", "--list", "b", "--grid", "g"});
}

TEST_CASE("flags: repeated flags, removed flags and unknown arguments", "[flags]") {
    int64_t n = 0;
    FlagSet once{"test"};
    once.option("--n", n, "");
    CHECK(parse_error(once, {"--n", "1", "--n", "2"}) == "--n: At Most 1 required but received 2");

    FlagSet layered{"test"};
    layered.repeated_flags_take_last();
    layered.option("--n", n, "");
    parse(layered, {"--n", "1", "--n", "2"});
    CHECK(n == 2);
    // A vector given last first, as CLI11 takes one: the last word on the line is the first in the vector.
    FlagSet from_vector{"test"};
    from_vector.repeated_flags_take_last();
    from_vector.option("--n", n, "");
    from_vector.parse(std::vector<std::string>{"3", "--n", "4", "--n"});
    CHECK(n == 3);

    FlagSet removed{"test"};
    std::string method;
    removed.option("--method", method, "");
    CHECK(removed.has("--method"));
    removed.remove("--method");
    CHECK_FALSE(removed.has("--method"));
    CHECK(parse_error(removed, {"--method", "x"}) == "The following arguments were not expected: x --method");

    FlagSet extras{"test"};
    extras.option("--n", n, "");
    extras.allow_extras();
    parse(extras, {"--bogus", "--n", "9"});
    CHECK(n == 9);
    CHECK(extras.remaining() == std::vector<std::string>{"--bogus"});
}

TEST_CASE("flags: --help is a request, not an error; the help shows groups and defaults", "[flags]") {
    FlagSet flags{"the tool's description", "tool"};
    double lr = 0.125;
    flags.option("--lr", lr, "learning rate").group("Training").show_default();
    CHECK_THROWS_AS(parse(flags, {"--help"}), FlagSet::HelpRequest);
    const std::string help = flags.help();
    CHECK(help.find("the tool's description") != std::string::npos);
    CHECK(help.find("Training:") != std::string::npos);
    CHECK(help.find("learning rate") != std::string::npos);
    CHECK(help.find("0.125") != std::string::npos);
    flags.get("--lr").description("the step size");
    CHECK(flags.help().find("the step size") != std::string::npos);
    CHECK(flags.help().find("learning rate") == std::string::npos);
}
