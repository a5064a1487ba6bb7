#pragma once
// The reference as an implementation under test: its certified outputs rounded to the requested
// format (what `posenc conform --impl reference` runs).
#include "posenc/judge/implementation.hpp"

namespace posenc::conformance {

class ReferenceImplementation final : public Implementation {
 public:
  std::string name() const override { return "posenc reference (MPFR, correctly rounded)"; }
  std::vector<Outcome> run(const VectorGroup& group, const VectorCase& c, std::span<const Format> formats) override;
};

}  // namespace posenc::conformance
