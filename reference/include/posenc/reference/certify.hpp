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

// Ziv's strategy over many independent results that share costly set-up (an attention case's
// rotated keys, shared by its rows): at each precision of the ladder, prepare(type_identity<R>)
// builds the shared part once and compute(shared, index) evaluates one result, for every index
// not certified at a lower precision. Returns each result's rounded values, in index order.
template <class Prepare, class Compute, class... Reals>
std::vector<std::vector<Rounded>> certify_each(Ladder<Reals...>, std::size_t count, Prepare&& prepare,
                                               Compute&& compute, const std::string& what) {
  std::vector<std::vector<Rounded>> results(count);
  std::vector<std::size_t> pending(count);
  for (std::size_t i = 0; i < count; ++i) pending[i] = i;
  auto at_precision = [&]<class R>(std::type_identity<R> type) {
    if (pending.empty()) return;
    std::optional<decltype(prepare(type))> shared;
    try {
      shared.emplace(prepare(type));
    } catch (const NeedMorePrecision&) {
      return;
    }
    std::vector<std::size_t> still;
    for (std::size_t index : pending) {
      auto one = [&](std::type_identity<R>) { return compute(*shared, index); };
      if (auto rounded = try_precision<R>(one)) {
        results[index] = std::move(*rounded);
      } else {
        still.push_back(index);
      }
    }
    pending = std::move(still);
  };
  (at_precision(std::type_identity<Reals>{}), ...);
  if (!pending.empty()) {
    throw Uncertifiable("posenc reference: cannot certify the rounding of " + what + " (result " +
                        std::to_string(pending.front()) + ") within " +
                        std::to_string(kDigits<decltype((Reals(), ...))>) + " bits");
  }
  return results;
}

}  // namespace posenc::ref
