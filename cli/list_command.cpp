// `posenc list`: the families and the values of their enumerated parameters, then the vector
// files (after the MANIFEST check) with their case counts and, per format, the valid cases judged in it.
#include <array>
#include <iomanip>
#include <iostream>
#include <map>

#include "commands.hpp"
#include "posenc/vectors/manifest.hpp"
#include "posenc/vectors/vectors.hpp"
#include "posenc/params.hpp"
#include "text_io.hpp"

namespace posenc::cli {

void add_list_command(Command& app) {
  auto vectors = std::make_shared<std::string>(default_vectors_dir());
  auto own = std::make_shared<bool>(false);
  Command c = app.add_command("list", "show the families, their variants, and the vector files with case counts");
  c.option("--vectors", *vectors, "folder of golden vectors with its MANIFEST").show_default();
  c.flag("--own-vectors", *own, "trust the folder's own MANIFEST (vectors of your own)");
  c.on_run([vectors, own] {
    std::cout << "families and variants (conformance/SPEC.md section 2)\n";
    for (const auto& group : {sinusoidal_choices(), rope_choices(), alibi_choices(), attention_choices()}) {
      for (const auto& choice : group) {
        std::cout << "  " << std::left << std::setw(12) << choice.family << std::setw(24) << choice.parameter;
        for (std::size_t i = 0; i < choice.values.size(); ++i) std::cout << (i ? ", " : "") << choice.values[i];
        std::cout << "\n";
      }
    }
    std::cout << "  " << std::setw(12) << "learned" << "a table lookup (no enumerated parameter)\n";

    std::cout << "\nvector files in " << *vectors << " (SHA-256 checked against MANIFEST)\n";
    // Per format: how many valid cases have inputs exact in it, so are judged in it (SPEC.md section 3).
    std::cout << "  " << std::setw(30) << "file" << std::right << std::setw(7) << "cases" << std::setw(7) << "valid"
              << std::setw(9) << "invalid";
    for (Format f : kAllFormats) std::cout << std::setw(6) << to_string(f);
    std::cout << "  case types\n";
    std::int64_t total = 0;
    const auto manifest = conformance::read_checked_manifest(*vectors, *own ? "" : shipped_manifest_sha256());
    for (const auto& entry : manifest) {
      const auto file = conformance::load_listed_file(*vectors, entry);
      std::int64_t valid = 0, invalid = 0;
      std::array<std::int64_t, 4> judged{};
      std::map<std::string, std::int64_t> types;
      for (const auto& g : file.groups) {
        types[std::string(conformance::to_string(g.type))] += static_cast<std::int64_t>(g.tests.size());
        for (const auto& t : g.tests) {
          (t.valid ? valid : invalid) += 1;
          if (!t.valid) continue;
          for (Format f : conformance::judged_formats(g, t)) judged[static_cast<std::size_t>(f)] += 1;
        }
      }
      std::cout << "  " << std::left << std::setw(30) << entry.path << std::right << std::setw(7) << entry.cases
                << std::setw(7) << valid << std::setw(9) << invalid;
      for (auto n : judged) std::cout << std::setw(6) << n;
      std::cout << "  ";
      bool first = true;
      for (const auto& [type, n] : types) {
        std::cout << (first ? "" : ", ") << type << " " << n;
        first = false;
      }
      std::cout << "\n";
      total += entry.cases;
    }
    std::cout << "  " << manifest.size() << " files, " << total << " cases\n";
  });
}

}  // namespace posenc::cli
