#pragma once
// posenc fast (one ISA path) under the suite. It computes in binary32 and stores f32, bf16 or
// f16; f64 outputs are reported as unsupported, except the frequencies it derives in binary64.
// Dot products are not offered (the suite would only re-derive them from rotations).
#include "posenc/judge/implementation.hpp"
#include "posenc/fast/fast.hpp"

namespace posenc::conformance {

class FastImplementation final : public Implementation {
 public:
  explicit FastImplementation(fast::Isa isa) : isa_(isa) {}
  std::string name() const override;
  std::vector<Outcome> run(const VectorGroup& group, const VectorCase& c, std::span<const Format> formats) override;
  // Its angles are p times a double-double frequency from long double formulas, accurate to
  // ~2^-63 relative (fast/src/frequencies.hpp): at least binary64, whatever the storage.
  std::optional<Format> working_format(Format) const override { return Format::f64; }
  // Its attention (fast/attention.hpp) computes in binary32 for every storage format.
  std::optional<Format> attention_working_format(Format) const override { return Format::f32; }

 private:
  fast::Isa isa_;
};

}  // namespace posenc::conformance
