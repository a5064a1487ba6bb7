// posenc: the reference, golden vectors and conformance suite for positional encodings.
// Exit status: 0 success (conform: conformant); 1 not conformant, or a result could not be
// certified; 2 bad usage, invalid parameters or refused input files.
#include <iostream>

#include "commands.hpp"
#include "posenc/errors.hpp"

int main(int argc, char** argv) {
  int status = 0;
  try {
    const int usage = posenc::cli::run_command_line(
        argc, argv, "posenc: verified reference and conformance suite for transformer positional encodings",
        [&status](posenc::cli::Command& app) {
          posenc::cli::add_eval_command(app);
          posenc::cli::add_seeds_command(app);
          posenc::cli::add_generate_command(app);
          posenc::cli::add_list_command(app);
          posenc::cli::add_compare_command(app);
          posenc::cli::add_conform_command(app, status);
          posenc::cli::add_serve_command(app, status);
        });
    if (usage != 0) return usage;
  } catch (const posenc::InvalidParameter& e) {
    std::cerr << "posenc: " << e.what() << "\n";
    return 2;
  } catch (const posenc::Uncertifiable& e) {
    std::cerr << "posenc: " << e.what() << "\n";
    return 1;
  } catch (const posenc::Error& e) {  // unreadable or untrusted input files
    std::cerr << "posenc: " << e.what() << "\n";
    return 2;
  }
  return status;
}
