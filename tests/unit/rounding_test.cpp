// Correct rounding straight from multiprecision values: ties, near-ties, subnormals, overflow,
// signed zeros and the double-rounding trap, for every format; and f32 hard cases of sin/cos.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <bit>
#include <cmath>
#include <random>

#include "posenc/reference/reference.hpp"
#include "posenc/reference/rounding.hpp"

namespace posenc::ref {
namespace {

using R = MpfrReal<60>;

R two_pow(int e) { return ldexp(R(1), e); }

double rounded(const R& x, Format f) { return to_double(f, round_to_format(x, f)); }

TEST(Rounding, TiesGoToEvenAndNearTiesToNearest) {
  for (Format f : kAllFormats) {
    SCOPED_TRACE(std::string(to_string(f)));
    const int p = spec(f).precision;
    const double ulp1 = std::ldexp(1.0, 1 - p);  // ulp of 1
    // 1 + ulp/2 is a tie between 1 (even) and 1 + ulp (odd): goes to 1.
    EXPECT_EQ(rounded(R(1) + two_pow(-p), f), 1.0);
    // 1 + 3 ulp/2: tie between 1 + ulp (odd) and 1 + 2 ulp (even).
    EXPECT_EQ(rounded(R(1) + 3 * two_pow(-p), f), 1.0 + 2 * ulp1);
    // A hair above and below the tie.
    EXPECT_EQ(rounded(R(1) + two_pow(-p) + two_pow(-150), f), 1.0 + ulp1);
    EXPECT_EQ(rounded(R(1) + two_pow(-p) - two_pow(-150), f), 1.0);
    // Negative values mirror.
    EXPECT_EQ(rounded(-(R(1) + 3 * two_pow(-p)), f), -(1.0 + 2 * ulp1));
  }
}

TEST(Rounding, NoDoubleRounding) {
  // 1 + 2^-8 + 2^-30: through f32 it becomes the bf16 tie 1 + 2^-8 and then rounds to 1;
  // directly it is above the tie and rounds up.
  R x = R(1) + two_pow(-8) + two_pow(-30);
  EXPECT_EQ(rounded(x, Format::bf16), 1.0 + std::ldexp(1.0, -7));
  float via_f32 = static_cast<float>(rounded(x, Format::f32));
  EXPECT_EQ(rounded(R(via_f32), Format::bf16), 1.0);
  // Same trap for f16 (1 + 2^-11 + 2^-40) and f32 (1 + 2^-24 + 2^-60 through f64).
  EXPECT_EQ(rounded(R(1) + two_pow(-11) + two_pow(-40), Format::f16), 1.0 + std::ldexp(1.0, -10));
  EXPECT_EQ(rounded(R(1) + two_pow(-24) + two_pow(-60), Format::f32), 1.0 + std::ldexp(1.0, -23));
}

TEST(Rounding, SubnormalResults) {
  // f16: smallest subnormal 2^-24, smallest normal 2^-14.
  EXPECT_EQ(round_to_format(two_pow(-24), Format::f16), 0x0001u);
  EXPECT_EQ(round_to_format(two_pow(-25), Format::f16), 0x0000u);                    // tie -> 0 (even)
  EXPECT_EQ(round_to_format(two_pow(-25) + two_pow(-90), Format::f16), 0x0001u);     // above tie
  EXPECT_EQ(round_to_format(3 * two_pow(-25), Format::f16), 0x0002u);                // tie 1|2 -> 2
  EXPECT_EQ(round_to_format(-two_pow(-26), Format::f16), 0x8000u);                   // -> -0
  EXPECT_EQ(round_to_format(two_pow(-14) - two_pow(-25), Format::f16), 0x0400u);     // carry to normal
  EXPECT_EQ(round_to_format(1023 * two_pow(-24), Format::f16), 0x03ffu);             // largest subnormal
  // bf16 shares f32's exponent range: smallest subnormal 2^-133.
  EXPECT_EQ(round_to_format(two_pow(-133), Format::bf16), 0x0001u);
  EXPECT_EQ(round_to_format(3 * two_pow(-134), Format::bf16), 0x0002u);
  EXPECT_EQ(round_to_format(two_pow(-134), Format::bf16), 0x0000u);
  // f32 and f64 smallest subnormals.
  EXPECT_EQ(round_to_format(two_pow(-149), Format::f32), 0x00000001u);
  EXPECT_EQ(round_to_format(two_pow(-1074), Format::f64), 0x1u);
  EXPECT_EQ(round_to_format(two_pow(-1075), Format::f64), 0x0u);
}

TEST(Rounding, OverflowToInfinity) {
  // f16 max 65504; 65520 is the tie with 2^16 (even) and so overflows.
  EXPECT_EQ(round_to_format(R(65504), Format::f16), 0x7bffu);
  EXPECT_EQ(round_to_format(R(65519), Format::f16), 0x7bffu);
  EXPECT_EQ(round_to_format(R(65520), Format::f16), 0x7c00u);
  EXPECT_EQ(round_to_format(R(-1e6), Format::f16), 0xfc00u);
  // bf16 max (2 - 2^-7) 2^127; the tie (2 - 2^-8) 2^127 overflows.
  EXPECT_EQ(round_to_format((2 - two_pow(-7)) * two_pow(127), Format::bf16), 0x7f7fu);
  EXPECT_EQ(round_to_format((2 - two_pow(-8)) * two_pow(127), Format::bf16), 0x7f80u);
  EXPECT_EQ(round_to_format(two_pow(1024), Format::f64), 0x7ff0000000000000u);
  EXPECT_EQ(round_to_format(two_pow(200), Format::f32), 0x7f800000u);
}

TEST(Rounding, SignedZeros) {
  for (Format f : kAllFormats) {
    EXPECT_EQ(round_to_format(R(0.0), f), 0u);
    EXPECT_EQ(round_to_format(R(-0.0), f), spec(f).sign_bit());
    EXPECT_EQ(round_to_format(-two_pow(-2000), f), spec(f).sign_bit());
  }
}

// The hardware's conversions round to nearest even: an independent oracle for f32 and f16.
TEST(Rounding, AgreesWithHardwareConversionsOnRandomDoubles) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200000; ++i) {
    double x = std::bit_cast<double>(rng());
    if (!std::isfinite(x)) continue;
    R r(x);
    ASSERT_EQ(round_to_format(r, Format::f64), std::bit_cast<std::uint64_t>(x));
    ASSERT_EQ(round_to_format(r, Format::f32), std::bit_cast<std::uint32_t>(static_cast<float>(x))) << x;
    ASSERT_EQ(round_to_format(r, Format::f16), std::bit_cast<std::uint16_t>(static_cast<_Float16>(x))) << x;
  }
}

// bf16 has no hardware conversion from double here; an integer round-to-nearest-even on the
// double's bits is the independent oracle (normal range only).
TEST(Rounding, Bf16AgreesWithIntegerRoundingOfDoubleBits) {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 200000; ++i) {
    double x = std::ldexp(std::uniform_real_distribution<double>(1.0, 2.0)(rng),
                          std::uniform_int_distribution<int>(-120, 120)(rng));
    // Sprinkle exact ties: clear the bits below the tie position half the time.
    std::uint64_t b = std::bit_cast<std::uint64_t>(x);
    if (rng() & 1) b = (b & ~((std::uint64_t{1} << 45) - 1)) | (std::uint64_t{1} << 44);
    x = std::bit_cast<double>(b);
    const int shift = 52 - 7;
    std::uint64_t mag = b & 0x7fffffffffffffffu;
    std::uint64_t lsb = (mag >> shift) & 1;
    std::uint64_t rounded_mag = (mag + ((std::uint64_t{1} << (shift - 1)) - 1) + lsb) >> shift;
    // Re-bias the exponent from 1023 to 127.
    std::uint64_t expected = rounded_mag - (std::uint64_t{1023 - 127} << 7);
    ASSERT_EQ(round_to_format(R(x), Format::bf16), expected) << std::hexfloat << x;
  }
}

TEST(Rounding, HexFloatText) {
  EXPECT_EQ(hex_float(Format::f64, std::bit_cast<std::uint64_t>(3.0)), "0x1.8p+1");
  EXPECT_EQ(hex_float(Format::f64, std::bit_cast<std::uint64_t>(1.0)), "0x1p+0");
  EXPECT_EQ(hex_float(Format::f64, std::bit_cast<std::uint64_t>(-0.0)), "-0x0p+0");
  EXPECT_EQ(hex_float(Format::f16, 0x0001), "0x1p-24");
  EXPECT_EQ(hex_float(Format::f16, 0x7bff), "0x1.ffcp+15");
  EXPECT_EQ(hex_float(Format::bf16, 0x7f80), "inf");
  EXPECT_EQ(hex_float(Format::f32, 0x3eaaaaab), "0x1.555556p-2");
  std::mt19937_64 rng(3);
  char buf[64];
  for (int i = 0; i < 10000; ++i) {
    double x = std::bit_cast<double>(rng());
    if (!std::isnormal(x)) continue;
    std::snprintf(buf, sizeof buf, "%a", x);
    ASSERT_EQ(hex_float(Format::f64, std::bit_cast<std::uint64_t>(x)), buf);
    ASSERT_EQ(std::strtod(hex_float(Format::f64, std::bit_cast<std::uint64_t>(x)).c_str(), nullptr), x);
  }
}

// f32 hard cases of sin and cos: among integer arguments below 2^18, the ones whose value lies
// closest to an f32 rounding boundary (found here with MPFR at 200 bits). A rounding that is not
// certified would go wrong first on exactly these. MPFR's own sin at precision 24, round to
// nearest, is the oracle.
TEST(Rounding, HardCasesOfSinCosInF32) {
  struct Hard {
    long p;
    bool is_sin;
    double closeness;
  };
  std::vector<Hard> hardest;
  mpfr_t x, y, m;
  mpfr_inits2(200, x, y, m, static_cast<mpfr_ptr>(nullptr));
  for (long p = 1; p < (1L << 18); ++p) {
    for (bool is_sin : {true, false}) {
      mpfr_set_si(x, p, MPFR_RNDN);
      is_sin ? mpfr_sin(y, x, MPFR_RNDN) : mpfr_cos(y, x, MPFR_RNDN);
      // Distance to the nearest midpoint, in units of the f32 ulp.
      long e = mpfr_get_exp(y);  // |y| in [2^(e-1), 2^e)
      mpfr_mul_2si(m, y, 24 - e, MPFR_RNDN);  // in f32 ulps: midpoints at k + 1/2
      mpfr_abs(m, m, MPFR_RNDN);
      mpfr_frac(m, m, MPFR_RNDN);
      double frac = mpfr_get_d(m, MPFR_RNDN);
      double closeness = std::fabs(frac - 0.5);
      if (hardest.size() < 8 || closeness < hardest.back().closeness) {
        hardest.push_back({p, is_sin, closeness});
        std::sort(hardest.begin(), hardest.end(), [](auto& a, auto& b) { return a.closeness < b.closeness; });
        if (hardest.size() > 8) hardest.pop_back();
      }
    }
  }
  ASSERT_LT(hardest.front().closeness, 1e-5);  // genuinely hard: within 10^-5 ulp of a midpoint
  mpfr_t r;
  mpfr_init2(r, 24);
  SinusoidalParams d2;
  d2.d_model = 2;  // w_0 = 1: PE(p) = [sin p, cos p]
  for (const auto& h : hardest) {
    mpfr_set_si(x, h.p, MPFR_RNDN);
    h.is_sin ? mpfr_sin(r, x, MPFR_RNDN) : mpfr_cos(r, x, MPFR_RNDN);
    float oracle = mpfr_get_flt(r, MPFR_RNDN);
    auto row = reference::sinusoidal_row(d2, h.p);
    EXPECT_EQ(row[h.is_sin ? 0 : 1].f32(), oracle)
        << (h.is_sin ? "sin(" : "cos(") << h.p << "), " << h.closeness << " ulp from a midpoint";
  }
  mpfr_clears(x, y, m, r, static_cast<mpfr_ptr>(nullptr));
}

}  // namespace
}  // namespace posenc::ref
