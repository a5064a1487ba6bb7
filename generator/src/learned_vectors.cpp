// Learned absolute position tables: lookups at the boundaries; out-of-range positions are errors.
#include "catalog.hpp"

namespace posenc::generator {

std::vector<VectorFile> learned_vectors() {
  FileBuilder b("learned", "lookup", 5001);
  describe_flags(b);
  b.note("OutOfRange", "position outside [0, max_positions): refused, never clamped, wrapped or truncated");

  LearnedParams gpt2;
  gpt2.max_positions = 1024;  // GPT-2's context; the table here has 4 columns instead of 768
  gpt2.dim = 4;
  VectorGroup& g = b.group(CaseType::learned_lookup, gpt2,
                           "GPT-2-shaped table: max_positions 1024 (seed 000: GPT-2 small's 1024 x 768 table has "
                           "786,432 parameters and a hard limit of 1024 tokens), dim 4, values on the common grid "
                           "(judged in f64, f32, bf16, f16)",
                           kCommonGrid);
  g.table = grid_vector(b.rng(), gpt2.parameter_count());
  for (std::int64_t pos : {0, 1, 512, 1022, 1023}) {
    b.add(at(pos, "row " + std::to_string(pos), pos == 0 || pos == 1023 ? std::vector<std::string>{"Boundary"}
                                                                          : std::vector<std::string>{}));
  }
  for (std::int64_t pos : {1024, 1025, 2048, -1}) {
    b.add_invalid(at(pos, "row " + std::to_string(pos) + " of a 1024-row table", {"OutOfRange", "InvalidParameter"}),
                  "learned.position");
  }

  LearnedParams tiny;
  tiny.max_positions = 3;
  tiny.dim = 4;
  VectorGroup& t = b.group(CaseType::learned_lookup, tiny, "special values are copied bit for bit (binary64 values: judged in f64 only)");
  t.table = {-0.0, 0x1p-1074, 0x1.fffffffffffffp+1023, 1 + 0x1p-24, 0x1p-149, -65520.0, 0x1.ffep-15, 3.0,
             1.0, -1.0, 0.5, 0.25};
  for (std::int64_t pos : {0, 1, 2}) b.add(at(pos, "row " + std::to_string(pos), {"EdgeInput", "F64Only"}));
  b.add_invalid(at(3, "row 3 of a 3-row table", {"OutOfRange", "InvalidParameter"}), "learned.position");

  LearnedParams empty;
  empty.max_positions = 0;
  empty.dim = 4;
  b.group(CaseType::learned_lookup, empty, "a table with no rows");
  b.add_invalid(at(0, "max_positions 0", {"InvalidParameter"}), "learned.max_positions");
  std::vector<VectorFile> files;
  files.push_back(std::move(b).finish());
  return files;
}

}  // namespace posenc::generator
