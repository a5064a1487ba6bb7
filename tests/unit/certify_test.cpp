// Ziv's driver: it escalates precision until every element is decided, and reports a case it
// cannot decide within the cap instead of guessing.
#include <gtest/gtest.h>

#include "posenc/reference/certify.hpp"

namespace posenc::ref {
namespace {

TEST(Certify, EscalatesUntilTheRoundingIsDecided) {
  // 1 + 2^-24 + 2^-300 lies 2^-300 above an f32 midpoint. At 201 bits it cannot even be
  // represented (it rounds onto the midpoint, with a nonzero error bound); at 400 bits it is.
  std::vector<int> tried;
  auto compute = [&]<class R>(std::type_identity<R>) {
    tried.push_back(kDigits<R>);
    R v = R(1) + ldexp(R(1), -24) + ldexp(R(1), -300);
    return std::vector<Approx<R>>{{v, abs(v) * unit_roundoff<R>()}};
  };
  auto out = certify(MpfrLadder{}, compute, "a near-midpoint");
  EXPECT_EQ(tried, (std::vector<int>{201, 400}));
  EXPECT_EQ(out.at(0).f32(), 1.0f + 0x1p-23f);
}

TEST(Certify, ReportsWhatItCannotDecide) {
  // Exactly on an f32 midpoint, but known only to within a nonzero bound: undecidable at any
  // precision, so it must be reported, not rounded.
  auto compute = []<class R>(std::type_identity<R>) {
    return std::vector<Approx<R>>{{R(1) + ldexp(R(1), -24), unit_roundoff<R>()}};
  };
  try {
    certify(MpfrLadder{}, compute, "a midpoint");
    ADD_FAILURE() << "no Uncertifiable";
  } catch (const Uncertifiable& e) {
    EXPECT_STREQ(e.what(), "posenc reference: cannot certify the rounding of a midpoint within 3191 bits");
  }
  // The other backend reports it too. One step of its ladder stands for all five: the driver is
  // the same template, and instantiating cpp_bin_float's arithmetic at every step doubled this
  // file's compile time (14.6 of 27 CPU s at -O3).
  EXPECT_THROW(certify(Ladder<BinReal<200>>{}, compute, "a midpoint"), Uncertifiable);
}

TEST(Certify, UndecidableBranchesAskForMorePrecision) {
  // floor() of a value 2^-500 below an integer is decided only once the bound is below 2^-500.
  std::vector<int> tried;
  auto compute = [&]<class R>(std::type_identity<R>) {
    tried.push_back(kDigits<R>);
    Approx<R> near_three{R(3) - ldexp(R(1), -500), ldexp(R(1), 4 - kDigits<R>)};
    return std::vector<Approx<R>>{floor(near_three)};
  };
  auto out = certify(MpfrLadder{}, compute, "floor");
  EXPECT_EQ(tried, (std::vector<int>{201, 400, 799}));
  EXPECT_EQ(out.at(0).f64(), 2.0);
}

TEST(Certify, ExactnessIsTrackedThroughArithmetic) {
  using R = MpfrReal<60>;
  auto half = Approx<R>::exact(R(0.5));
  auto bias = half * exact_int<R>(-257);  // -128.5: exact
  EXPECT_TRUE(bias.is_exact());
  EXPECT_TRUE((bias + exact_double<R>(0x1p-60)).is_exact());
  EXPECT_FALSE((exact_int<R>(1) / exact_int<R>(3)).is_exact());
  EXPECT_TRUE((exact_int<R>(3) / exact_int<R>(4)).is_exact());
  EXPECT_TRUE(sqrt(exact_int<R>(1024)).is_exact());
  EXPECT_FALSE(sqrt(exact_int<R>(512)).is_exact());
  // A sum whose exact value needs more bits than the precision is not claimed exact.
  EXPECT_FALSE((exact_int<R>(1) + Approx<R>::exact(ldexp(R(1), -300))).is_exact());
  // Exact zero results are +0.
  auto zero = exact_double<R>(-0.0) * exact_int<R>(5);
  EXPECT_TRUE(zero.is_exact());
  EXPECT_FALSE(signbit(zero.v));
}

}  // namespace
}  // namespace posenc::ref
