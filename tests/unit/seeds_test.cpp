// The worked examples of the seed documents (../shared/seeds), reproduced by the reference.
#include <gtest/gtest.h>

#include <cmath>

#include "posenc/reference/reference.hpp"
#include "posenc/generator/seed_examples.hpp"

namespace posenc {
namespace {

TEST(Seed000, SmallTableD4) {
  // The document's table, three decimals: order sin, cos (fast pair), sin, cos (slow pair).
  const double printed[4][4] = {{0, 1, 0, 1},
                                {0.841, 0.540, 0.010, 1.000},
                                {0.909, -0.416, 0.020, 1.000},
                                {0.141, -0.990, 0.030, 1.000}};
  SinusoidalParams d4{.d_model = 4};
  for (int pos = 0; pos < 4; ++pos) {
    auto row = reference::sinusoidal_row(d4, pos);
    for (int j = 0; j < 4; ++j) EXPECT_NEAR(row[j].f64(), printed[pos][j], 0.0005) << pos << "," << j;
  }
  // Position 0 is exactly [0, 1, 0, 1].
  auto zero = reference::sinusoidal_row(d4, 0);
  EXPECT_EQ(zero[0].f64(), 0.0);
  EXPECT_EQ(zero[1].f64(), 1.0);
  // Position 6: sin 6 ~ -0.28, cos 6 ~ 0.96.
  auto six = reference::sinusoidal_row(d4, 6);
  EXPECT_NEAR(six[0].f64(), -0.28, 0.005);
  EXPECT_NEAR(six[1].f64(), 0.96, 0.005);
}

TEST(Seed000, DotProductsD512DependOnlyOnDistance) {
  SinusoidalParams d512{.d_model = 512};
  auto dot = [&](std::int64_t a, std::int64_t b) { return reference::sinusoidal_dot(d512, a, b); };
  EXPECT_NEAR(dot(10, 11).f64(), 249.1021, 0.00005);
  EXPECT_NEAR(dot(10, 15).f64(), 189.5967, 0.00005);
  EXPECT_NEAR(dot(10, 50).f64(), 137.027, 0.0005);
  // Same distance, same real number: the certified roundings agree in every format.
  EXPECT_EQ(dot(10, 11), dot(100, 101));
  EXPECT_EQ(dot(10, 15), dot(100, 105));
  EXPECT_EQ(dot(10, 50), dot(100, 140));
  // PE(p).PE(p) = d/2 exactly.
  EXPECT_EQ(dot(7, 7).f64(), 256.0);
  EXPECT_EQ(dot(123456, 123456).f64(), 256.0);
}

TEST(Seed000, Gpt2LearnedTable) {
  LearnedParams gpt2{.max_positions = 1024, .dim = 768};
  EXPECT_EQ(gpt2.parameter_count(), 786432);
  EXPECT_THROW(validate_learned_position(gpt2, 1024), InvalidParameter);
}

TEST(Seed003, RopeDotProductsAsPrinted) {
  RopeParams p;
  p.head_dim = p.rotary_dim = 8;
  for (auto [m, n, printed] : seeds::kRopeDots) {
    std::int64_t pm[] = {m}, pn[] = {n};
    double v = reference::rope_dot(p, pm, pn, seeds::kQ, seeds::kK).f64();
    char text[32];
    std::snprintf(text, sizeof text, "%.6f", v);
    EXPECT_STREQ(text, printed) << "q at " << m << ", k at " << n;
  }
}

TEST(Seed003, SameDistanceGivesBitIdenticalLogits) {
  RopeParams p;
  p.head_dim = p.rotary_dim = 8;
  auto dot = [&](std::int64_t m, std::int64_t n) {
    std::int64_t pm[] = {m}, pn[] = {n};
    return reference::rope_dot(p, pm, pn, seeds::kQ, seeds::kK);
  };
  const Rounded at_3_1 = dot(3, 1);
  EXPECT_EQ(dot(10, 8), at_3_1);
  EXPECT_EQ(dot(100, 98), at_3_1);
  EXPECT_EQ(dot(5000, 4998), at_3_1);
  EXPECT_EQ(dot(2147483647, 2147483645), at_3_1);
  // Distance 0 is the unrotated q.k: rotation at 0 is the identity, exactly.
  EXPECT_EQ(dot(100, 100), dot(0, 0));
}

}  // namespace
}  // namespace posenc
