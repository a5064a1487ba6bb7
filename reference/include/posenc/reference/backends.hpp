#pragma once
// The two independent multiprecision backends and their precision ladders (Ziv's strategy).
#include <boost/multiprecision/cpp_bin_float.hpp>
#include <boost/multiprecision/mpfr.hpp>
#include <limits>

namespace posenc::ref {

namespace bmp = boost::multiprecision;

// MPFR: every elementary function is correctly rounded at the working precision.
template <unsigned Digits10>
using MpfrReal = bmp::number<bmp::mpfr_float_backend<Digits10>, bmp::et_off>;
// Boost's header-only binary float: an independent implementation of the same functions.
template <unsigned Bits>
using BinReal = bmp::number<bmp::cpp_bin_float<Bits, bmp::digit_base_2>, bmp::et_off>;

template <class R>
inline constexpr bool kCorrectlyRounded = false;
template <unsigned D>
inline constexpr bool kCorrectlyRounded<MpfrReal<D>> = true;

template <class R>
inline constexpr int kDigits = std::numeric_limits<R>::digits;

// A ladder is the list of working precisions a computation is tried at, lowest first.
// Each step doubles the precision; the last one is the cap (about 3000 bits).
template <class... Reals>
struct Ladder {};

using MpfrLadder = Ladder<MpfrReal<60>, MpfrReal<120>, MpfrReal<240>, MpfrReal<480>, MpfrReal<960>>;
using BinLadder = Ladder<BinReal<200>, BinReal<400>, BinReal<800>, BinReal<1600>, BinReal<3200>>;

}  // namespace posenc::ref
