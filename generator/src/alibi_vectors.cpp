// ALiBi slopes and bias blocks, causal and symmetric, including non-power-of-two head counts.
#include "catalog.hpp"

namespace posenc::generator {
namespace {

AlibiParams alibi(std::int64_t heads, AlibiMode mode = AlibiMode::causal) {
  AlibiParams p;
  p.n_heads = heads;
  p.mode = mode;
  return p;
}

VectorFile slopes_file() {
  FileBuilder b("alibi", "slopes", 4001);
  describe_flags(b);
  b.note("NonPowerOfTwoHeads", "n_heads not a power of two: the paper's interleaved slopes of 2m heads");
  for (std::int64_t heads : {1, 2, 3, 5, 6, 8, 12, 16, 20, 24, 32, 40, 64, 80}) {
    b.group(CaseType::alibi_slopes, alibi(heads), std::to_string(heads) + " heads");
    std::vector<std::string> flags;
    if ((heads & (heads - 1)) != 0) flags.push_back("NonPowerOfTwoHeads");
    std::string comment = "slopes of " + std::to_string(heads) + " heads";
    if (heads == 12) comment += " (BERT-base/BLOOM-560m-sized head count)";
    b.add(at_axes({}, comment, flags));
  }
  return std::move(b).finish();
}

VectorFile bias_file() {
  FileBuilder b("alibi", "bias", 4002);
  describe_flags(b);
  b.note("Causal", "bias(i, j) = -slope (i - j), key j <= query i");
  b.note("Symmetric", "bias(i, j) = -slope |i - j|");
  for (auto mode : {AlibiMode::causal, AlibiMode::symmetric}) {
    const std::string flag = mode == AlibiMode::causal ? "Causal" : "Symmetric";
    for (std::int64_t heads : {8, 12}) {
      b.group(CaseType::alibi_bias, alibi(heads, mode),
              std::to_string(heads) + " heads, " + std::string(to_string(mode)) + ": the 6 x 6 block of every head");
      for (std::int64_t h = 0; h < heads; ++h) {
        for (std::int64_t i = 0; i < 6; ++i) {
          for (std::int64_t j = 0; j < 6; ++j) {
            if (mode == AlibiMode::causal && j > i) continue;
            VectorCase c = at_axes({}, "head " + std::to_string(h) + ", query " + std::to_string(i) + ", key " +
                                           std::to_string(j),
                                   {flag});
            c.head = h;
            c.query = i;
            c.key = j;
            b.add(std::move(c));
          }
        }
      }
    }
    b.group(CaseType::alibi_bias, alibi(20, mode), "20 heads, " + std::string(to_string(mode)) + ": far positions");
    for (auto [h, i, j] : std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>>{
             {0, 1000000, 0}, {19, 2147483647, 0}, {16, 2147483647, 2147483646}, {10, 16777217, 1}}) {
      VectorCase c = at_axes({}, "head " + std::to_string(h) + ", query " + std::to_string(i) + ", key " +
                                     std::to_string(j),
                             {flag, "LongContext"});
      c.head = h;
      c.query = i;
      c.key = j;
      b.add(std::move(c));
      if (mode == AlibiMode::symmetric) {
        VectorCase swapped = at_axes({}, "head " + std::to_string(h) + ", query " + std::to_string(j) + ", key " +
                                             std::to_string(i) + " (swapped)",
                                     {flag, "LongContext"});
        swapped.head = h;
        swapped.query = j;
        swapped.key = i;
        b.add(std::move(swapped));
      }
    }
  }
  b.group(CaseType::alibi_bias, alibi(8), "exact midpoints");
  VectorCase c = at_axes({}, "slope 1/2 at distance 257: -128.5, a bf16 midpoint (rounds to -128)", {"Midpoint", "Causal"});
  c.head = 0;
  c.query = 257;
  c.key = 0;
  b.add(std::move(c));
  return std::move(b).finish();
}

VectorFile invalid_alibi_file() {
  FileBuilder b("alibi", "invalid", 4003);
  describe_flags(b);
  b.group(CaseType::alibi_slopes, alibi(0), "zero heads");
  b.add_invalid(at_axes({}, "n_heads 0", {"InvalidParameter"}), "alibi.n_heads");
  b.group(CaseType::alibi_bias, alibi(8), "8 heads, causal");
  auto bias = [&](std::int64_t h, std::int64_t i, std::int64_t j, const std::string& comment, const std::string& param) {
    VectorCase c = at_axes({}, comment, {"InvalidParameter"});
    c.head = h;
    c.query = i;
    c.key = j;
    b.add_invalid(std::move(c), param);
  };
  bias(8, 3, 1, "head 8 of 8 (heads are 0-based)", "alibi.head");
  bias(-1, 3, 1, "head -1", "alibi.head");
  bias(0, 3, 5, "key after query in causal mode", "alibi.key_position");
  bias(0, -1, -2, "negative query position", "alibi.query_position");
  return std::move(b).finish();
}

}  // namespace

std::vector<VectorFile> alibi_vectors() {
  std::vector<VectorFile> files;
  files.push_back(slopes_file());
  files.push_back(bias_file());
  files.push_back(invalid_alibi_file());
  return files;
}

}  // namespace posenc::generator
