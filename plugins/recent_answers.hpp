#pragma once
// The reference plugin's memory of its last answers. The suite asks for every case once per
// format (f64, f32, bf16, f16 in turn), with the same parameters and, for inputs exact in every
// format, the same input values; the reference's exact answer does not depend on the format, so
// without this memory the plugin computed each case four times (plugins.reference.all was the
// slowest plugin test). Parameters compare as the real numbers the reference computes on;
// positions and inputs compare bit by bit (a copied element keeps its input's bits, so -0 and +0
// inputs differ).
#include <algorithm>
#include <bit>
#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "posenc/rounded.hpp"

namespace posenc::plugin {

template <class Params>
class RecentAnswers {
 public:
  // compute() is called unless an answer for the same arguments is kept.
  template <class Compute>
  const std::vector<Rounded>& get(const Params& p, std::span<const std::int64_t> positions,
                                  std::span<const double> x, Compute compute) {
    std::vector<std::uint64_t> bits(x.size());
    std::ranges::transform(x, bits.begin(), [](double v) { return std::bit_cast<std::uint64_t>(v); });
    for (const Entry& e : kept_) {
      if (e.params == p && std::ranges::equal(e.positions, positions) && e.x_bits == bits) return e.answer;
    }
    if (kept_.size() == kKept) kept_.pop_front();
    kept_.push_back({p, {positions.begin(), positions.end()}, std::move(bits), compute()});
    return kept_.back().answer;
  }

 private:
  // One case's rows: q and k of a dot product, several tokens or heads.
  static constexpr std::size_t kKept = 64;
  struct Entry {
    Params params;
    std::vector<std::int64_t> positions;
    std::vector<std::uint64_t> x_bits;
    std::vector<Rounded> answer;
  };
  std::deque<Entry> kept_;
};

}  // namespace posenc::plugin
