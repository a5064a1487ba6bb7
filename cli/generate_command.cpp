// `posenc generate --out DIR`: writes the whole golden-vector set from the reference.
#include <iostream>

#include "commands.hpp"
#include "posenc/generator/generate.hpp"

namespace posenc::cli {

void add_generate_command(Command& app) {
  auto out = std::make_shared<std::string>();
  Command c = app.add_command("generate", "write the golden vectors (deterministic) and their MANIFEST");
  c.option("--out", *out, "output folder (vectors/ to refresh the shipped set)").required();
  c.on_run([out] {
    const auto files = generator::build_all_vectors();
    generator::write_vectors(files, *out);
    std::int64_t cases = 0;
    for (const auto& f : files) cases += f.number_of_tests();
    std::cout << "posenc generate: " << files.size() << " files, " << cases << " test cases in " << *out << "\n";
  });
}

}  // namespace posenc::cli
