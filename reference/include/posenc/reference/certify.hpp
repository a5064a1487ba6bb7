#pragma once
// Ziv's strategy: evaluate at the ladder's lowest precision; if any element's enclosing interval
// straddles a rounding boundary (or a branch cannot be decided), evaluate everything again at the
// next precision. Past the cap, report the case as uncertifiable rather than guess.
#include <string>
#include <type_traits>
#include <vector>

#include "posenc/errors.hpp"
#include "posenc/reference/rounding.hpp"

namespace posenc::ref {

template <class R, class F>
std::optional<std::vector<Rounded>> try_precision(F& compute) {
  try {
    std::vector<Approx<R>> values = compute(std::type_identity<R>{});
    std::vector<Rounded> out;
    out.reserve(values.size());
    for (const auto& v : values) {
      auto r = try_round(v);
      if (!r) return std::nullopt;
      out.push_back(std::move(*r));
    }
    return out;
  } catch (const NeedMorePrecision&) {
    return std::nullopt;
  }
}

// compute(std::type_identity<R>) returns the std::vector<Approx<R>> of one case.
template <class F, class... Reals>
std::vector<Rounded> certify(Ladder<Reals...>, F&& compute, const std::string& what) {
  std::optional<std::vector<Rounded>> result;
  // Fold over the ladder, stopping at the first precision that certifies every element.
  ((result = try_precision<Reals>(compute), result.has_value()) || ...);
  if (!result) {
    throw Uncertifiable("posenc reference: cannot certify the rounding of " + what + " within " +
                        std::to_string(kDigits<decltype((Reals(), ...))>) + " bits");
  }
  return std::move(*result);
}

}  // namespace posenc::ref
