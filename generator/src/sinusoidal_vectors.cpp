// Sinusoidal encodings: both layouts, both frequency conventions, the seed 000 examples, the
// x*sqrt(d)+PE combination, dot products, and invalid parameters.
#include "catalog.hpp"
#include "posenc/generator/seed_examples.hpp"

namespace posenc::generator {
namespace {

SinusoidalParams sinusoidal(std::int64_t d, SinusoidalLayout layout, SinusoidalFrequencies frequencies) {
  SinusoidalParams p;
  p.d_model = d;
  p.layout = layout;
  p.frequencies = frequencies;
  return p;
}

std::string name(const SinusoidalParams& p) {
  return "d_model " + std::to_string(p.d_model) + ", base " + decimal(p.base) + ", " +
         std::string(to_string(p.layout)) + ", " + std::string(to_string(p.frequencies)) + " frequencies";
}

void rows(FileBuilder& b, SinusoidalFrequencies frequencies) {
  for (auto layout : {SinusoidalLayout::interleaved, SinusoidalLayout::concatenated}) {
    for (std::int64_t d : {2, 4, 64, 128, 512, 768, 1024}) {
      const auto p = sinusoidal(d, layout, frequencies);
      b.group(CaseType::sinusoidal_row, p, name(p));
      const bool wide = d >= 512;
      const auto positions = wide ? std::vector<std::int64_t>{0, 1, 6, 1000, 1000000}
                                  : std::vector<std::int64_t>{0, 1, 2, 3, 6, 50, 1000, 65536, 1000000};
      for (auto pos : positions) b.add(at(pos, "position " + std::to_string(pos), position_flags(pos)));
    }
  }
}

VectorFile table_file(SinusoidalFrequencies frequencies) {
  const bool paper = frequencies == SinusoidalFrequencies::paper;
  FileBuilder b("sinusoidal", paper ? "paper" : "tensor2tensor", paper ? 3001 : 3002);
  describe_flags(b);
  if (paper) {
    const auto d4 = sinusoidal(4, SinusoidalLayout::interleaved, frequencies);
    b.group(CaseType::sinusoidal_row, d4, "seed 000: the d = 4 table (sin, cos of the fast pair, then the slow pair)");
    for (std::int64_t pos : {0, 1, 2, 3, 6}) {
      b.add(at(pos, "seed 000: PE(" + std::to_string(pos) + ") for d = 4", {"SeedExample"}));
    }
  }
  rows(b, frequencies);
  auto p = sinusoidal(64, SinusoidalLayout::interleaved, frequencies);
  p.base = 500.0;
  b.group(CaseType::sinusoidal_row, p, name(p));
  for (std::int64_t pos : {0, 7, 123456}) b.add(at(pos, "position " + std::to_string(pos), position_flags(pos)));
  if (!paper) {
    // Appended (the tcIds before it stay): d_model 6, the width where tensor2tensor's
    // denominator max(d/2 - 1, 1) first exceeds 1; 2 and 4 take the 1 (docs/mutation.md).
    b.note("SmallDModel",
           "d_model 6: the smallest width whose tensor2tensor denominator max(d/2 - 1, 1) is d/2 - 1 = 2, next to "
           "d_model 2 and 4, where it is 1");
    for (auto layout : {SinusoidalLayout::interleaved, SinusoidalLayout::concatenated}) {
      const auto d6 = sinusoidal(6, layout, frequencies);
      b.group(CaseType::sinusoidal_row, d6, name(d6));
      for (std::int64_t pos : {0, 1, 2, 3, 6, 50, 1000, 1000000}) {
        auto flags = position_flags(pos);
        flags.push_back("SmallDModel");
        b.add(at(pos, "position " + std::to_string(pos), flags));
      }
    }
  }
  return std::move(b).finish();
}

VectorFile embedding_file() {
  FileBuilder b("sinusoidal", "embedding", 3003);
  describe_flags(b);
  for (std::int64_t d : {4, 64, 512}) {
    for (auto layout : {SinusoidalLayout::interleaved, SinusoidalLayout::concatenated}) {
      const auto p = sinusoidal(d, layout, SinusoidalFrequencies::paper);
      b.group(CaseType::sinusoidal_embed, p,
              name(p) + ": x * sqrt(d_model) + PE(position), x on the common grid (judged in f64, f32, bf16, f16)",
              kCommonGrid);
      for (std::int64_t pos : {0, 1, 100, 65537, 1000000}) {
        VectorCase c = at(pos, "position " + std::to_string(pos) + ", random x", position_flags(pos));
        c.x = grid_vector(b.rng(), d);
        b.add(std::move(c));
      }
    }
  }
  const auto d4 = sinusoidal(4, SinusoidalLayout::interleaved, SinusoidalFrequencies::paper);
  b.group(CaseType::sinusoidal_embed, d4,
          "exact midpoints: sqrt(4) = 2, so x * 2 + PE(0) is exact (binary64 inputs: judged in f64 only)");
  VectorCase c = at(0, "x = 1 + 2^-24: 2 + 2^-23 + 0 is a binary32 midpoint (rounds to 2)", {"Midpoint", "F64Only"});
  c.x = {1 + 0x1p-24, 0x1.0040000000001p+0, -0.0, 0x1p-1074};
  b.add(std::move(c));
  return std::move(b).finish();
}

VectorFile dot_file() {
  FileBuilder b("sinusoidal", "dot", 3004);
  describe_flags(b);
  const auto d512 = sinusoidal(512, SinusoidalLayout::interleaved, SinusoidalFrequencies::paper);
  b.group(CaseType::sinusoidal_dot, d512, "seed 000: PE(a).PE(b) for d = 512 depends only on |a - b|");
  for (auto [a, c, printed] : seeds::kSinusoidalDots) {
    VectorCase v = at(a, "seed 000: PE(" + std::to_string(a) + ").PE(" + std::to_string(c) + ") (the document: " +
                             printed + ")",
                      {"SeedExample", "SameDistance"});
    v.position_b = {c};
    b.add(std::move(v));
  }
  for (auto layout : {SinusoidalLayout::interleaved, SinusoidalLayout::concatenated}) {
    for (auto frequencies : {SinusoidalFrequencies::paper, SinusoidalFrequencies::tensor2tensor}) {
      const auto p = sinusoidal(128, layout, frequencies);
      b.group(CaseType::sinusoidal_dot, p, name(p));
      for (auto [a, c] : std::vector<std::pair<std::int64_t, std::int64_t>>{
               {0, 0}, {3, 8}, {1000003, 1000008}, {0, 1000000}, {2147483647, 2147483647}}) {
        VectorCase v = at(a, "PE(" + std::to_string(a) + ").PE(" + std::to_string(c) + ")", position_flags(a));
        v.position_b = {c};
        b.add(std::move(v));
      }
    }
  }
  return std::move(b).finish();
}

VectorFile invalid_sinusoidal_file() {
  FileBuilder b("sinusoidal", "invalid", 3005);
  describe_flags(b);
  auto refuse = [&](SinusoidalParams p, std::int64_t position, const std::string& comment, const std::string& parameter) {
    b.group(CaseType::sinusoidal_row, p, comment);
    b.add_invalid(at(position, comment, {"InvalidParameter"}), parameter);
  };
  auto ok = sinusoidal(8, SinusoidalLayout::interleaved, SinusoidalFrequencies::paper);
  auto p = ok;
  p.d_model = 7;
  refuse(p, 1, "odd d_model", "sinusoidal.d_model");
  p.d_model = 0;
  refuse(p, 1, "d_model 0", "sinusoidal.d_model");
  for (double base : {1.0, 0.0, -10000.0}) {
    p = ok;
    p.base = base;
    refuse(p, 1, "base " + decimal(base) + " (must be > 1)", "sinusoidal.base");
  }
  refuse(ok, -1, "negative position", "sinusoidal.position");
  b.group(CaseType::sinusoidal_embed, ok, "x must have d_model values");
  VectorCase c = at(1, "x of 7 values for d_model 8 (never truncated or padded)", {"InvalidParameter"});
  c.x = std::vector<double>(7, 1.0);
  b.add_invalid(std::move(c), "sinusoidal.x");
  return std::move(b).finish();
}

}  // namespace

std::vector<VectorFile> sinusoidal_vectors() {
  std::vector<VectorFile> files;
  files.push_back(table_file(SinusoidalFrequencies::paper));
  files.push_back(table_file(SinusoidalFrequencies::tensor2tensor));
  files.push_back(embedding_file());
  files.push_back(dot_file());
  files.push_back(invalid_sinusoidal_file());
  return files;
}

}  // namespace posenc::generator
