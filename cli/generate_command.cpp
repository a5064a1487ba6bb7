// `posenc generate --out DIR`: writes the whole golden-vector set from the reference; with
// --hf-config FILE, that model's vectors instead (hf_vectors.hpp).
#include <iostream>

#include "commands.hpp"
#include "hf_vectors.hpp"
#include "posenc/errors.hpp"
#include "posenc/generator/generate.hpp"

namespace posenc::cli {

void add_generate_command(Command& app) {
  auto out = std::make_shared<std::string>();
  auto hf_config = std::make_shared<std::optional<std::string>>();
  Command c = app.add_command("generate", "write the golden vectors (deterministic) and their MANIFEST");
  c.option("--out", *out, "output folder (vectors/ to refresh the shipped set)").required();
  c.option("--hf-config", *hf_config,
           "a Hugging Face config.json: that model's vectors (rotate, table, logit; positions past its context), "
           "for conform/verify --vectors DIR --own-vectors");
  auto name = std::make_shared<std::optional<std::string>>();
  c.option("--name", *name,
           "with --hf-config: the model's name, the file rope/NAME.json (default: the config's _name_or_path, its "
           "last part, else its model_type, else the file's name)");
  c.on_run([out, hf_config, name] {
    if (*name && !*hf_config) {
      throw InvalidParameter("--name", "'" + **name + "'", "absent without --hf-config (it names a config's vectors)");
    }
    const auto files = *hf_config ? hf_config_vectors(**hf_config, *name) : generator::build_all_vectors();
    generator::write_vectors(files, *out);
    std::int64_t cases = 0;
    for (const auto& f : files) cases += f.number_of_tests();
    std::cout << "posenc generate: " << files.size() << " files, " << cases << " test cases in " << *out << "\n";
  });
}

}  // namespace posenc::cli
