// posenc: the reference, golden vectors and conformance suite for positional encodings.
// Exit status: 0 success (conform: conformant); 1 not conformant, or a result could not be
// certified; 2 bad usage, invalid parameters or refused input files.
#include <iostream>

#include "commands.hpp"
#include "posenc/errors.hpp"

int main(int argc, char** argv) {
  CLI::App app{"posenc: verified reference and conformance suite for transformer positional encodings"};
  app.require_subcommand(1);
  posenc::cli::add_eval_command(app);
  posenc::cli::add_seeds_command(app);
  posenc::cli::add_generate_command(app);
  posenc::cli::add_list_command(app);
  posenc::cli::add_compare_command(app);
  int status = 0;
  posenc::cli::add_conform_command(app, status);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "posenc: " << e.what() << "\n(run 'posenc --help' for usage)\n";
    return 2;
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
