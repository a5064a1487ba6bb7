// `posenc serve`: the judge as a kept process speaking JSON lines on stdin and stdout (SPEC.md
// section 10), so code in any language (the Python package in python/) gets cases and verdicts
// from this one judge, without a compiled binding per language and ABI.
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "serve_session.hpp"

namespace posenc::cli {

void add_serve_command(Command& app, int& status) {
  auto o = std::make_shared<ConformOptions>();
  auto name = std::make_shared<std::string>("posenc serve client");
  Command c = app.add_command("serve", "judge outputs sent as JSON lines on stdin, one case at a time (SPEC.md section 10)");
  c.option("--implementation", *name, "the name the summary and reports give the code under test").show_default();
  add_judging_options(c, *o);
  c.on_run([o, name, &status] {
    ServeSession session(*o, *name);  // bad options or vectors: refused before any request
    std::ios::sync_with_stdio(false);
    std::string line;
    while (!session.finished() && std::getline(std::cin, line)) {
      if (line.empty()) continue;
      session.handle(line, std::cout);
    }
    if (!session.finished()) {
      // The client went away without asking for the verdict: say so, never a silent pass.
      std::cerr << "posenc serve: input ended before a finish request; no verdict\n";
      status = 2;
      return;
    }
    status = session.status();
  });
}

}  // namespace posenc::cli
