#pragma once
// The reference plugin's memory of its last answers. The suite asks for every case once per
// format (f64, f32, bf16, f16 in turn), with the same parameters and, for inputs exact in every
// format, the same input values; the reference's exact answer does not depend on the format, so
// without this memory the plugin would compute each case four times (plugins.reference.all is
// the longest plugin test). Parameters compare as the real numbers the reference computes on;
// positions and inputs compare bit by bit (a copied element keeps its input's bits, so -0 and +0
// inputs differ).
#include <algorithm>
#include <bit>
#include <cstdint>
#include <span>
#include <vector>

#include "posenc/recent_values.hpp"
#include "posenc/rounded.hpp"

namespace posenc::plugin {

template <class Params>
class RecentAnswers {
 public:
  // compute() is called unless an answer for the same arguments is kept.
  template <class Compute>
  const std::vector<Rounded>& get(const Params& p, std::span<const std::int64_t> positions,
                                  std::span<const double> x, Compute compute) {
    Arguments key{p, {positions.begin(), positions.end()}, std::vector<std::uint64_t>(x.size())};
    std::ranges::transform(x, key.x_bits.begin(), [](double v) { return std::bit_cast<std::uint64_t>(v); });
    return kept_.get(key, [&](const Arguments&) { return compute(); });
  }

 private:
  struct Arguments {
    Params params;
    std::vector<std::int64_t> positions;
    std::vector<std::uint64_t> x_bits;
    friend bool operator==(const Arguments&, const Arguments&) = default;
  };
  // One case's rows: q and k of a dot product, several tokens or heads.
  RecentValues<Arguments, std::vector<Rounded>, 64> kept_;
};

}  // namespace posenc::plugin
