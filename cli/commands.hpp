#pragma once
// Subcommands of the posenc CLI. Each registers its options and a callback on the app.
#include "command_line.hpp"

namespace posenc::cli {

void add_eval_command(Command& app);
void add_seeds_command(Command& app);
void add_generate_command(Command& app);
void add_list_command(Command& app);
void add_compare_command(Command& app);
// Sets status to 0 (conformant) or 1 (not conformant).
void add_conform_command(Command& app, int& status);
// `serve`: sets status as verify does once the client sends finish (2 when it never does).
void add_serve_command(Command& app, int& status);

}  // namespace posenc::cli
