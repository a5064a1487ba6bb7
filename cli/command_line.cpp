// The one translation unit that compiles CLI11 (see command_line.hpp).
#include "command_line.hpp"

#include <CLI/CLI.hpp>
#include <iostream>

namespace posenc::cli {

Option& Option::required() {
  option_->required();
  return *this;
}

Option& Option::show_default() {
  option_->capture_default_str();
  return *this;
}

Option& Option::comma_separated() {
  option_->delimiter(',');
  return *this;
}

Command Command::add_command(const std::string& name, const std::string& help) {
  return Command(app_->add_subcommand(name, help));
}

void Command::require_subcommand() { app_->require_subcommand(1); }

Option Command::option(const std::string& name, std::string& value, const std::string& help) {
  return Option(app_->add_option(name, value, help));
}

Option Command::option(const std::string& name, std::optional<std::string>& value, const std::string& help) {
  return Option(app_->add_option(name, value, help));
}

Option Command::option(const std::string& name, std::vector<std::string>& values, const std::string& help) {
  return Option(app_->add_option(name, values, help));
}

void Command::flag(const std::string& name, bool& value, const std::string& help) { app_->add_flag(name, value, help); }

void Command::on_run(std::function<void()> callback) { app_->callback(std::move(callback)); }

int run_command_line(int argc, char** argv, const std::string& description,
                     const std::function<void(Command&)>& add) {
  CLI::App app{description};
  Command root(&app);
  root.require_subcommand();
  add(root);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "posenc: " << e.what() << "\n(run 'posenc --help' for usage)\n";
    return 2;
  }
  return 0;
}

}  // namespace posenc::cli
