#pragma once
// The command line of every classwise binary, behind one small facade over CLI11.
//
// Why a facade: CLI11 is header-only and emits its whole parser into every file that builds one (about 7 s of
// compile time per file, in 30 files). Only util/flags.cpp includes it; everything else sees this header.
//
//   cli::FlagSet app{"classwise train: ...", "train"};
//   app.option("--lr", r.lr, "learning rate").range(0.0, 10.0).show_default();
//   app.option("--attack-mode", o.mode, "default|train|eval").choice(modes, "default|train|eval");
//   app.flag("--resume", f.resume, "continue from <out>/state.safetensors");
// and cli::parse (cli/common_flags.h) parses argv with the flags every binary shares.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace cw::cli {

// One option of a FlagSet, for chaining its checks; a handle, valid as long as its FlagSet.
class Flag {
public:
    explicit Flag(CLI::Option* option) : option_(option) {}

    // The value must lie in [lo, hi] (both of one type, as CLI11's Range).
    template <class T>
    Flag& range(T lo, T hi) {
        if constexpr (std::is_floating_point_v<T>)
            return range_real(static_cast<double>(lo), static_cast<double>(hi));
        else
            return range_integer(static_cast<int64_t>(lo), static_cast<int64_t>(hi));
    }
    Flag& one_of(const std::vector<std::string>& values);   // exactly one of these words
    Flag& existing_file();                                  // a path to a file that exists
    Flag& positive();                                       // a number > 0
    Flag& non_empty();                                      // text that is not empty (a folder, a name)
    // An enum given by name ("original|cfa" in the help instead of a name->number table); a bad value is one line
    // listing the names. Case-insensitive.
    template <class E>
    Flag& choice(const std::map<std::string, E>& values, const std::string& names) {
        std::map<std::string, int> numbers;
        for (const auto& [name, value] : values) numbers[name] = static_cast<int>(value);
        return choice_numbers(numbers, names);
    }
    Flag& group(const std::string& name);          // the --help section it is listed under
    Flag& show_default();                          // --help shows the value it has now
    Flag& description(const std::string& text);    // replaces the help text
    Flag& list_separator(char separator);          // a list option also splits each value at `separator`

    bool given() const;                 // on the command line (or set by a preset)
    std::string last_value() const;     // the last value given, as typed
    void apply(const std::string& value);   // as if `--flag value` had been given (a preset)

private:
    friend class FlagSet;
    Flag& range_real(double lo, double hi);
    Flag& range_integer(int64_t lo, int64_t hi);
    Flag& choice_numbers(const std::map<std::string, int>& numbers, const std::string& names);
    CLI::Option* option_;
};

// A bad command line: the message names the flag and what was expected, on one line.
struct FlagError : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

class FlagSet {
public:
    explicit FlagSet(const std::string& description, const std::string& program = "");
    ~FlagSet();
    FlagSet(const FlagSet&) = delete;
    FlagSet& operator=(const FlagSet&) = delete;

    // An option taking a value. The target keeps its value unless the flag is given.
    Flag option(const std::string& name, bool& target, const std::string& help);
    Flag option(const std::string& name, int& target, const std::string& help);
    Flag option(const std::string& name, int64_t& target, const std::string& help);
    Flag option(const std::string& name, uint64_t& target, const std::string& help);
    Flag option(const std::string& name, float& target, const std::string& help);
    Flag option(const std::string& name, double& target, const std::string& help);
    Flag option(const std::string& name, std::string& target, const std::string& help);
    Flag option(const std::string& name, std::vector<std::string>& target, const std::string& help);
    Flag option(const std::string& name, std::vector<int64_t>& target, const std::string& help);
    Flag option(const std::string& name, std::vector<double>& target, const std::string& help);
    Flag option(const std::string& name, std::vector<float>& target, const std::string& help);
    // An enum, read as its number (name it with Flag::choice).
    template <class E, std::enable_if_t<std::is_enum_v<E>, int> = 0>
    Flag option(const std::string& name, E& target, const std::string& help) {
        return enum_option(
            name, [&target](int v) { target = static_cast<E>(v); },
            [&target] { return static_cast<int>(target); }, help);
    }

    // A switch: given sets the target true ("!--no-x" sets it false).
    Flag flag(const std::string& name, bool& target, const std::string& help);

    Flag get(const std::string& name);    // an option added before (throws if there is none)
    bool has(const std::string& name) const;
    void remove(const std::string& name);   // a binary that fixes a shared flag takes it off its command line

    // Unknown arguments are kept (remaining()) instead of refused, so the caller can report them first.
    void allow_extras();
    std::vector<std::string> remaining() const;

    // Options added from now on keep the last of repeated values instead of refusing them (a grid's cells layer
    // base, setting and command-line flags).
    void repeated_flags_take_last();

    // How many options there are; with given_tokens, the flags among options [first, end) that the command line
    // gave, as tokens ("--lr", "0.1", "--resume") to parse again elsewhere.
    size_t size() const;
    std::vector<std::string> given_tokens(size_t first, size_t end) const;

    // Parses; a bad flag throws FlagError with CLI11's message on one line, --help throws HelpRequest.
    void parse(int argc, const char* const* argv);
    void parse(std::vector<std::string> args_last_first);   // as CLI11 takes a vector: the last argument first
    struct HelpRequest {};

    std::string help() const;
    std::string config_text() const;   // every option's resolved value, one `name=value` line each

private:
    Flag enum_option(const std::string& name, std::function<void(int)> set, std::function<int()> get,
                     const std::string& help);
    std::unique_ptr<CLI::App> app_;
};

}  // namespace cw::cli
