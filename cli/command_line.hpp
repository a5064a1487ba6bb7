#pragma once
// The command line behind a small interface. CLI11 2.1 (Debian's libcli11-dev) is header-only:
// every translation unit that includes it compiles its whole parser (compare_command.cpp took
// 14.6 CPU s at -O3 with it, 2.7 without), so only command_line.cpp includes it, and the
// commands register their options through these two classes. Every option is read as text (or a flag) and parsed
// by posenc's own readers, so every error names the option and the text.
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace posenc::cli {

// One registered option, for chaining its settings.
class Option {
 public:
  Option& required();
  // --help shows the option's value at registration time as its default.
  Option& show_default();
  // Several values may also be given comma-separated in one argument.
  Option& comma_separated();

 private:
  friend class Command;
  explicit Option(CLI::Option* option) : option_(option) {}
  CLI::Option* option_;
};

// A command or subcommand; the value references must outlive parsing (callbacks run after it).
class Command {
 public:
  Command add_command(const std::string& name, const std::string& help);
  // Exactly one subcommand must be given.
  void require_subcommand();
  Option option(const std::string& name, std::string& value, const std::string& help);
  Option option(const std::string& name, std::optional<std::string>& value, const std::string& help);
  Option option(const std::string& name, std::vector<std::string>& values, const std::string& help);
  void flag(const std::string& name, bool& value, const std::string& help);
  // Runs after parsing when this command was given.
  void on_run(std::function<void()> callback);

 private:
  friend int run_command_line(int, char**, const std::string&, const std::function<void(Command&)>&);
  explicit Command(CLI::App* app) : app_(app) {}
  CLI::App* app_;
};

// Registers the commands through `add`, parses argv and runs the given command's callback.
// Returns 0, or 2 after printing a usage error; --help prints the help and returns 0.
// Exceptions thrown by the callbacks propagate.
int run_command_line(int argc, char** argv, const std::string& description,
                     const std::function<void(Command&)>& add);

}  // namespace posenc::cli
