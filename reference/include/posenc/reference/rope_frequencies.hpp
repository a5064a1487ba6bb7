#pragma once
// Per-pair RoPE frequencies and the attention factor, for every scaling, in exact real math: the
// shared formulas (spec's posenc/formulas/rope_frequencies.hpp, which cites each source)
// evaluated with certified Approx<R>.
#include "posenc/formulas/rope_frequencies.hpp"
#include "posenc/params/rope.hpp"
#include "posenc/reference/approx.hpp"
#include "posenc/reference/approx_number.hpp"

namespace posenc::ref {

template <class R>
using RopeFrequencies = formulas::RopeFrequencies<Approx<R>>;

template <class R>
RopeFrequencies<R> rope_frequencies(const RopeParams& p) {
  return formulas::rope_frequencies<Approx<R>>(p);
}

}  // namespace posenc::ref
