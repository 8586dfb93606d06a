// The one file that includes CLI11 (see util/flags.h for why).
#include "util/flags.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <utility>

#include "util/format.h"

namespace cw::cli {

Flag& Flag::range_real(double lo, double hi) {
    // CLI11's Range lets NaN through (every comparison with it is false): refused first.
    option_->check(CLI::Validator(
        [](std::string& text) {
            return std::isnan(std::strtod(text.c_str(), nullptr)) ? "expected a number, got '" + text + "'" : std::string();
        },
        "", "not NaN"));
    option_->check(CLI::Range(lo, hi));
    return *this;
}

Flag& Flag::range_integer(int64_t lo, int64_t hi) {
    option_->check(CLI::Range(lo, hi));
    return *this;
}

Flag& Flag::one_of(const std::vector<std::string>& values) {
    option_->check(CLI::IsMember(values));
    return *this;
}

Flag& Flag::existing_file() {
    option_->check(CLI::ExistingFile);
    return *this;
}

Flag& Flag::positive() {
    option_->check(CLI::PositiveNumber);
    return *this;
}

Flag& Flag::non_empty() {
    option_->check(CLI::Validator(
        [](std::string& text) { return text.empty() ? std::string("expected a value, got an empty one") : std::string(); },
        "", "not empty"));
    return *this;
}

// The name becomes the enum's number before CLI11 reads it, so the option's own conversion stays CLI11's.
Flag& Flag::choice_numbers(const std::map<std::string, int>& numbers, const std::string& names) {
    option_->transform(CLI::Validator(
        [numbers, names](std::string& text) -> std::string {
            std::string key = text;
            for (char& ch : key) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
            const auto it = numbers.find(key);
            if (it == numbers.end()) return "expected one of " + names + ", got '" + text + "'";
            text = std::to_string(it->second);
            return std::string();
        },
        names));
    return *this;
}

Flag& Flag::group(const std::string& name) {
    option_->group(name);
    return *this;
}

Flag& Flag::show_default() {
    option_->capture_default_str();
    return *this;
}

Flag& Flag::description(const std::string& text) {
    option_->description(text);
    return *this;
}

Flag& Flag::list_separator(char separator) {
    option_->delimiter(separator);
    return *this;
}

bool Flag::given() const { return option_->count() > 0; }

std::string Flag::last_value() const { return option_->results().empty() ? std::string() : option_->results().back(); }

namespace {
// CLI11's messages can span lines; ours are one line.
[[noreturn]] void rethrow_one_line(const CLI::ParseError& e) {
    throw FlagError(util::one_line(e.what()));
}
}  // namespace

void Flag::apply(const std::string& value) {
    try {
        option_->add_result(value);
        option_->run_callback();
    } catch (const CLI::ParseError& e) {
        rethrow_one_line(e);
    }
}

FlagSet::FlagSet(const std::string& description, const std::string& program)
    : app_(std::make_unique<CLI::App>(description, program)) {}

FlagSet::~FlagSet() = default;

Flag FlagSet::option(const std::string& name, bool& target, const std::string& help) {
    return Flag(app_->add_option(name, target, help));
}
Flag FlagSet::option(const std::string& name, int& target, const std::string& help) {
    return Flag(app_->add_option(name, target, help));
}
Flag FlagSet::option(const std::string& name, int64_t& target, const std::string& help) {
    return Flag(app_->add_option(name, target, help));
}
// CLI11 reads an unsigned number with strtoull, which takes "-1" as 2^64 - 1: refused instead.
Flag FlagSet::option(const std::string& name, uint64_t& target, const std::string& help) {
    CLI::Option* opt = app_->add_option(name, target, help);
    opt->check(CLI::Validator(
        [](std::string& text) -> std::string {
            const size_t first = text.find_first_not_of(" \t");
            if (first == std::string::npos || text[first] != '-') return std::string();
            return "expected a whole number >= 0, got '" + text + "'";
        },
        ""));
    return Flag(opt);
}
Flag FlagSet::option(const std::string& name, float& target, const std::string& help) {
    return Flag(app_->add_option(name, target, help));
}
Flag FlagSet::option(const std::string& name, double& target, const std::string& help) {
    return Flag(app_->add_option(name, target, help));
}
Flag FlagSet::option(const std::string& name, std::string& target, const std::string& help) {
    return Flag(app_->add_option(name, target, help));
}
Flag FlagSet::option(const std::string& name, std::vector<std::string>& target, const std::string& help) {
    return Flag(app_->add_option(name, target, help));
}
Flag FlagSet::option(const std::string& name, std::vector<int64_t>& target, const std::string& help) {
    return Flag(app_->add_option(name, target, help));
}
Flag FlagSet::option(const std::string& name, std::vector<double>& target, const std::string& help) {
    return Flag(app_->add_option(name, target, help));
}
Flag FlagSet::option(const std::string& name, std::vector<float>& target, const std::string& help) {
    return Flag(app_->add_option(name, target, help));
}

// What CLI11's add_option does for an enum target: read an integer, keep the current value as the default text.
Flag FlagSet::enum_option(const std::string& name, std::function<void(int)> set, std::function<int()> get,
                          const std::string& help) {
    auto read = [set](const CLI::results_t& results) {
        int value = 0;
        if (results.empty() || !CLI::detail::lexical_cast(results.front(), value)) return false;
        set(value);
        return true;
    };
    CLI::Option* opt = app_->add_option(name, read, help, false, [get] { return std::to_string(get()); });
    opt->type_name("ENUM");
    opt->type_size(1);
    opt->expected(1);
    opt->run_callback_for_default();
    return Flag(opt);
}

Flag FlagSet::flag(const std::string& name, bool& target, const std::string& help) {
    return Flag(app_->add_flag(name, target, help));
}

Flag FlagSet::get(const std::string& name) {
    CLI::Option* opt = app_->get_option_no_throw(name);
    if (!opt) throw std::logic_error("no option " + name + " on this command line");
    return Flag(opt);
}

bool FlagSet::has(const std::string& name) const { return app_->get_option_no_throw(name) != nullptr; }

void FlagSet::remove(const std::string& name) { app_->remove_option(get(name).option_); }

void FlagSet::allow_extras() { app_->allow_extras(); }

std::vector<std::string> FlagSet::remaining() const { return app_->remaining(); }

void FlagSet::repeated_flags_take_last() {
    app_->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

size_t FlagSet::size() const { return app_->get_options().size(); }

std::vector<std::string> FlagSet::given_tokens(size_t first, size_t end) const {
    const std::vector<const CLI::Option*> options = std::as_const(*app_).get_options();
    std::vector<std::string> tokens;
    for (size_t i = first; i < std::min(end, options.size()); ++i) {
        const CLI::Option* o = options[i];
        if (!o->count()) continue;
        if (o->get_expected_min() == 0) {   // a switch
            tokens.push_back(o->get_name());
            continue;
        }
        for (const std::string& r : o->results()) {
            tokens.push_back(o->get_name());
            tokens.push_back(r);
        }
    }
    return tokens;
}

void FlagSet::parse(int argc, const char* const* argv) {
    try {
        app_->parse(argc, argv);
    } catch (const CLI::CallForHelp&) {
        throw HelpRequest{};
    } catch (const CLI::ParseError& e) {
        rethrow_one_line(e);
    }
}

void FlagSet::parse(std::vector<std::string> args_last_first) {
    try {
        app_->parse(args_last_first);
    } catch (const CLI::CallForHelp&) {
        throw HelpRequest{};
    } catch (const CLI::ParseError& e) {
        rethrow_one_line(e);
    }
}

std::string FlagSet::help() const { return app_->help(); }

std::string FlagSet::config_text() const {
    return app_->config_to_str(/*default_also=*/true, /*write_description=*/false);
}

}  // namespace cw::cli
