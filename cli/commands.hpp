#pragma once
// Subcommands of the posenc CLI. Each registers its options and a callback on the app.
#include <CLI/CLI.hpp>

namespace posenc::cli {

void add_eval_command(CLI::App& app);
void add_seeds_command(CLI::App& app);
void add_generate_command(CLI::App& app);
void add_list_command(CLI::App& app);
void add_compare_command(CLI::App& app);
// Sets status to 0 (conformant) or 1 (not conformant).
void add_conform_command(CLI::App& app, int& status);

}  // namespace posenc::cli
