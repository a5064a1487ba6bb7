// posenc fast beyond what the suite checks: every ISA path and every thread count give the same
// bits (the kept workers too, shared by concurrent callers), the cached path gives the fused path's bits, storage conversions round to nearest even
// like the hardware, and bad calls are refused with the parameter named. The accuracy itself is
// the suite's job (conform_fast_paths).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <numeric>
#include <optional>
#include <random>
#include <span>
#include <thread>
#include <utility>

#include "elements.hpp"
#include "posenc/errors.hpp"
#include "posenc/fast/fast.hpp"
#include "test_setup.hpp"
#include "workers.hpp"

namespace posenc::fast {
namespace {

using test_setup::Bytes;
using test_setup::yarn_rope;

struct Batch {
  std::int64_t tokens = 37, heads = 3, stride = 0;
  std::vector<std::int64_t> positions;
  Bytes q, k;
};

// Rows padded by `pad` elements: strides are honoured; a pad of 8 keeps rows 16-byte aligned, so
// that non-temporal stores are used where the rows allow, 3 does not, and 16 (f32) or 32 (bf16)
// keeps head_dim 128's rows 64-byte aligned, where the AVX-512 path writes whole lines.
Batch random_batch(const RopeParams& p, DType d, std::uint32_t seed, std::int64_t pad, std::int64_t tokens = 37) {
  std::mt19937 rng(seed);
  Batch b;
  b.tokens = tokens;
  b.stride = p.head_dim + pad;
  // Scattered positions, then a run of consecutive ones across two anchors of the angle
  // addition (RopePlan::kSteps), which the thread splits cut at different tokens.
  std::uniform_int_distribution<std::int64_t> anywhere(-(1LL << 31), 1LL << 31);
  for (std::int64_t t = 0; t < 17; ++t) b.positions.push_back(anywhere(rng));
  for (std::int64_t t = 17, first = anywhere(rng); t < b.tokens; ++t) b.positions.push_back(first + t);
  const auto n = static_cast<std::size_t>(b.tokens * b.heads * b.stride);
  std::uniform_real_distribution<float> value(-4, 4);
  for (auto* v : {&b.q, &b.k}) {
    v->resize(n * size_of(d));
    for (std::size_t i = 0; i < n; ++i) detail::store(d, v->data(), static_cast<std::int64_t>(i), value(rng));
  }
  return b;
}

RopeTensor tensor(const Batch& b, const Bytes& in, Bytes& out) {
  RopeTensor t;
  t.in = in.data();
  t.out = out.data();
  t.in_token_stride = t.out_token_stride = b.heads * b.stride;
  t.in_head_stride = t.out_head_stride = b.stride;
  return t;
}

// A tensor whose input and output rows lie head_stride elements apart within a token and
// token_stride apart across tokens.
RopeTensor strided(float* in, float* out, std::int64_t token_stride, std::int64_t head_stride) {
  RopeTensor t;
  t.in = in;
  t.out = out;
  t.in_token_stride = t.out_token_stride = token_stride;
  t.in_head_stride = t.out_head_stride = head_stride;
  return t;
}

// The first positions.size() tokens of x, one head of the plan's head_dim each, rotated (in place
// or out of place) by the fast path with `options`, or without them through a RopeCache of the
// positions' range on the scalar path (whose rows never use what a thread keeps).
std::vector<float> rotated(const RopePlan& plan, const std::vector<std::int64_t>& positions, const std::vector<float>& x,
                           bool in_place, std::optional<Options> options) {
  const std::int64_t dim = plan.params().head_dim, n = static_cast<std::int64_t>(positions.size());
  std::vector<float> in(x.begin(), x.begin() + n * dim), out(in.size());
  const RopeTensor t = strided(in.data(), in_place ? in.data() : out.data(), dim, dim);
  if (options) {
    rope_apply(plan, DType::f32, n, 1, positions.data(), t, {}, *options);
  } else {
    const auto [low, high] = std::minmax_element(positions.begin(), positions.end());
    const RopeCache cache(plan, *low, *high - *low + 1, Isa::scalar);
    rope_apply(cache, DType::f32, n, 1, positions.data(), t, {}, {Isa::scalar});
  }
  return in_place ? in : out;
}

// The tests that compare paths run once per ISA path; a path this CPU lacks is skipped (and
// reported as skipped), not compared scalar against scalar and counted as passed.
class FastPath : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    const std::vector<Isa> here = supported_isas();
    if (std::find(here.begin(), here.end(), GetParam()) == here.end()) {
      GTEST_SKIP() << to_string(GetParam()) << ": this CPU does not support it";
    }
  }
};
INSTANTIATE_TEST_SUITE_P(Isa, FastPath, ::testing::Values(Isa::scalar, Isa::avx2, Isa::avx512),
                         [](const ::testing::TestParamInfo<Isa>& p) { return std::string(to_string(p.param)); });

TEST_P(FastPath, EveryPathThreadCountAndTheCacheGiveTheSameBits) {
  for (auto layout : {RopeLayout::interleaved, RopeLayout::half}) {
    // 32, 128 and 256: rows held in registers across heads on the vector paths (generic/rotate.hpp).
    for (auto [head_dim, rotary_dim] : {std::pair{128, 128}, {256, 256}, {32, 32}, {64, 48}, {18, 18}, {6, 4}}) {
      for (auto [d, pad] : {std::pair{DType::f32, 3}, {DType::f32, 8}, {DType::f32, 16}, {DType::bf16, 3}, {DType::bf16, 8},
                            {DType::bf16, 32}, {DType::f16, 8}}) {
        const RopeParams p = yarn_rope(layout, head_dim, rotary_dim);
        const RopePlan plan(p);
        const Batch b = random_batch(p, d, static_cast<std::uint32_t>(head_dim * 7 + rotary_dim), pad);
        Bytes q0(b.q.size()), k0(b.k.size());
        Options first{Isa::scalar, 1};
        rope_apply(plan, d, b.tokens, b.heads, b.positions.data(), tensor(b, b.q, q0), tensor(b, b.k, k0), first);
        EXPECT_NE(q0, b.q);
        for (Isa isa : {GetParam()}) {
          for (int threads : {1, 2, 3}) {
            for (Stores stores : {Stores::automatic, Stores::cached, Stores::streaming}) {
              Bytes q(b.q.size()), k(b.k.size());
              rope_apply(plan, d, b.tokens, b.heads, b.positions.data(), tensor(b, b.q, q), tensor(b, b.k, k), {isa, threads, stores});
              EXPECT_EQ(q, q0) << to_string(isa) << " " << threads << " threads " << to_string(d) << " " << head_dim
                               << " stores " << static_cast<int>(stores);
              EXPECT_EQ(k, k0) << to_string(isa) << " " << threads << " threads";
            }
            // In place: the same rotated rows; the padding between rows is untouched. A streaming
            // call streams no in-place output, and takes whole blocks as runs (rope.cpp, streamed).
            for (Stores stores : {Stores::automatic, Stores::streaming}) {
              auto qi = b.q;
              RopeTensor in_place = tensor(b, b.q, qi);
              in_place.in = qi.data();
              rope_apply(plan, d, b.tokens, b.heads, b.positions.data(), in_place, {}, {isa, threads, stores});
              const std::size_t row = static_cast<std::size_t>(p.head_dim) * size_of(d), stride = static_cast<std::size_t>(b.stride) * size_of(d);
              for (std::size_t r = 0; r < qi.size(); r += stride) {
                ASSERT_EQ(std::memcmp(qi.data() + r, q0.data() + r, row), 0) << "in place, " << to_string(isa) << " stores " << static_cast<int>(stores);
                ASSERT_EQ(std::memcmp(qi.data() + r + row, b.q.data() + r + row, stride - row), 0) << "padding written";
              }
            }
          }
          // Cached rows for a small range of positions reproduce the fused path's bits.
          std::vector<std::int64_t> near(b.positions.size());
          for (std::size_t t = 0; t < near.size(); ++t) near[t] = 1000 + static_cast<std::int64_t>(t * 5 % 64);
          const RopeCache cache(plan, 1000, 64, isa);
          Bytes fused(b.q.size()), cached(b.q.size());
          rope_apply(plan, d, b.tokens, b.heads, near.data(), tensor(b, b.q, fused), {}, {isa, 1});
          rope_apply(cache, d, b.tokens, b.heads, near.data(), tensor(b, b.q, cached), {}, {isa, 2});
          EXPECT_EQ(cached, fused) << to_string(isa);
        }
      }
    }
  }
}

// Non-finite inputs through every path (SPEC 2.3): a NaN makes both elements of its pair NaN and
// no other, an infinity gives what IEEE arithmetic gives; the paths agree on every element, NaN
// payloads aside (not compared). Among the NaNs: every payload extreme of each format, so that a
// rounding step that carries a NaN's payload into its exponent or sign would show here.
TEST_P(FastPath, NonFiniteInputsGiveTheSameResultsOnEveryPath) {
  const std::vector<std::uint32_t> specials32{0x7fc00000, 0xffc00000, 0x7f800001, 0x7fffffff, 0xffffffff, 0x7f800000, 0xff800000};
  const std::vector<std::uint16_t> specials_bf16{0x7fc0, 0xffc0, 0x7f81, 0x7fff, 0xffff, 0x7f80, 0xff80};
  const std::vector<std::uint16_t> specials_f16{0x7e00, 0xfe00, 0x7c01, 0x7fff, 0xffff, 0x7c00, 0xfc00};
  for (auto layout : {RopeLayout::interleaved, RopeLayout::half}) {
    for (DType d : {DType::f32, DType::bf16, DType::f16}) {
      const RopeParams p = yarn_rope(layout, 64, 64);
      const RopePlan plan(p);
      Batch b = random_batch(p, d, 11, 0);
      const std::size_t n = b.q.size() / size_of(d);
      std::mt19937 rng(3);
      for (std::size_t i = 0; i < n; i += 1 + rng() % 40) {  // one element in ~20 non-finite
        const std::size_t which = rng() % specials32.size();
        if (d == DType::f32) std::memcpy(b.q.data() + 4 * i, &specials32[which], 4);
        else std::memcpy(b.q.data() + 2 * i, d == DType::bf16 ? &specials_bf16[which] : &specials_f16[which], 2);
      }
      Bytes q0(b.q.size());
      rope_apply(plan, d, b.tokens, b.heads, b.positions.data(), tensor(b, b.q, q0), {}, {Isa::scalar, 1});
      std::size_t nans = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const float x = detail::load(d, b.q.data(), static_cast<std::int64_t>(i));
        const std::int64_t e = static_cast<std::int64_t>(i % 64), partner = layout == RopeLayout::half ? (e + 32) % 64 : e ^ 1;
        const float y = detail::load(d, q0.data(), static_cast<std::int64_t>(i)),
                    x_partner = detail::load(d, b.q.data(), static_cast<std::int64_t>(i) - e + partner);
        if (std::isnan(x) || std::isnan(x_partner)) {
          ASSERT_TRUE(std::isnan(y)) << i;
        }
        if (std::isfinite(x) && std::isfinite(x_partner)) {
          ASSERT_TRUE(std::isfinite(y)) << i;
        }
        nans += std::isnan(y);
      }
      EXPECT_GT(nans, n / 20);
      for (Isa isa : {GetParam()}) {
        for (Stores stores : {Stores::cached, Stores::streaming}) {
          Bytes q(b.q.size());
          rope_apply(plan, d, b.tokens, b.heads, b.positions.data(), tensor(b, b.q, q), {}, {isa, 1, stores});
          for (std::size_t i = 0; i < n; ++i) {
            const float y0 = detail::load(d, q0.data(), static_cast<std::int64_t>(i)), y = detail::load(d, q.data(), static_cast<std::int64_t>(i));
            if (std::isnan(y0)) {
              ASSERT_TRUE(std::isnan(y)) << to_string(isa) << " " << to_string(d) << " element " << i;
            } else {
              ASSERT_EQ(std::bit_cast<std::uint32_t>(y), std::bit_cast<std::uint32_t>(y0)) << to_string(isa) << " " << to_string(d) << " element " << i;
            }
          }
        }
      }
    }
  }
}

TEST(Fast, StorageConversionsRoundToNearestEvenLikeTheHardware) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<std::uint32_t> bits;
  for (int i = 0; i < 2000000; ++i) {
    const float f = std::bit_cast<float>(bits(rng));
    if (std::isnan(f)) continue;
    const auto half = static_cast<_Float16>(f);  // GCC: IEEE binary16, round to nearest even
    std::uint16_t expected;
    std::memcpy(&expected, &half, 2);
    ASSERT_EQ(detail::float_to_f16(f), expected) << std::hexfloat << f;
    ASSERT_EQ(detail::f16_to_float(expected), static_cast<float>(half));
    // bf16: the value nearest f among those with 8 significant bits, ties to even, by integer RNE
    // on the top half; checked against rounding by arithmetic.
    const std::uint16_t b = detail::float_to_bf16(f);
    const float back = detail::bf16_to_float(b);
    if (std::isinf(back) && !std::isinf(f)) continue;  // overflow past the largest bf16
    // Neighbours in magnitude (same sign); a tie must have gone to the even pattern.
    const auto sign = static_cast<std::uint16_t>(b & 0x8000u), magnitude = static_cast<std::uint16_t>(b & 0x7fffu);
    for (int step : {-1, 1}) {
      if (magnitude == 0 && step < 0) continue;
      const float other = detail::bf16_to_float(static_cast<std::uint16_t>(sign | (magnitude + step)));
      ASSERT_LE(std::fabs(back - f), std::fabs(other - f)) << std::hexfloat << f;
      if (std::fabs(back - f) == std::fabs(other - f)) {
        ASSERT_EQ(b & 1u, 0u) << std::hexfloat << f;
      }
    }
  }
}

template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const InvalidParameter& e) {
    return e.what();
  }
  return "no error";
}

// Grouped-query attention: K with its own (fewer) heads in Q's call gives the bits of a call per
// tensor, on every thread count and store mode, out of place and in place: in a call whose rows
// are all kept (37 tokens), rotated as one pass, Q's tokens then K's, and in a longer one (600
// tokens at head_dim 128), in passes of a block (rope.cpp, rotate_tokens). The comparisons across
// paths cannot show a K token rotated by another token's row: every path shares the driver that
// hands rows out, and the suite rotates Q alone.
TEST_P(FastPath, KWithItsOwnHeadCountGivesTheBitsOfSeparateCalls) {
  for (auto layout : {RopeLayout::interleaved, RopeLayout::half}) {
    for (auto [d, tokens] : {std::pair{DType::f32, 37}, {DType::bf16, 37}, {DType::f32, 600}}) {
      const RopeParams p = yarn_rope(layout, 128, 128);
      const RopePlan plan(p);
      const Batch b = random_batch(p, d, 5, 8, tokens);
      const auto k_bytes = static_cast<std::size_t>(b.tokens * b.stride) * size_of(d);  // 1 head per token
      const Bytes k_in(b.k.begin(), b.k.begin() + static_cast<std::ptrdiff_t>(k_bytes));
      const auto k_tensor = [&](const Bytes& in, Bytes& out) {
        RopeTensor k;
        k.in = in.data();
        k.out = out.data();
        k.in_token_stride = k.out_token_stride = k.in_head_stride = k.out_head_stride = b.stride;
        k.heads = 1;
        return k;
      };
      // Outputs start as copies of the inputs, so that the padding between rows (never written)
      // compares equal in place and out of place.
      Bytes q0 = b.q, k0 = k_in;
      rope_apply(plan, d, b.tokens, b.heads, b.positions.data(), tensor(b, b.q, q0), {}, {Isa::scalar, 1});
      EXPECT_NE(q0, b.q);
      RopeTensor k_alone = k_tensor(k_in, k0);
      k_alone.heads = 0;
      rope_apply(plan, d, b.tokens, 1, b.positions.data(), k_alone, {}, {Isa::scalar, 1});
      for (int threads : {1, 2, 3}) {
        for (Stores stores : {Stores::automatic, Stores::cached, Stores::streaming}) {
          const std::string what = std::string(to_string(d)) + ", " + std::to_string(tokens) + " tokens, " +
                                   std::to_string(threads) + " threads, stores " + std::to_string(static_cast<int>(stores));
          Bytes q = b.q, k = k_in;
          rope_apply(plan, d, b.tokens, b.heads, b.positions.data(), tensor(b, b.q, q), k_tensor(k_in, k), {GetParam(), threads, stores});
          EXPECT_EQ(q, q0) << what;
          EXPECT_EQ(k, k0) << what;
          Bytes qi = b.q, ki = k_in;
          rope_apply(plan, d, b.tokens, b.heads, b.positions.data(), tensor(b, qi, qi), k_tensor(ki, ki), {GetParam(), threads, stores});
          EXPECT_EQ(qi, q0) << what << ", in place";
          EXPECT_EQ(ki, k0) << what << ", in place";
        }
      }
      Bytes k(k_bytes);
      RopeTensor bad = k_tensor(k_in, k);
      bad.heads = -1;
      Bytes q(b.q.size());
      EXPECT_NE(error_of([&] { rope_apply(plan, d, b.tokens, b.heads, b.positions.data(), tensor(b, b.q, q), bad); })
                    .find("k.heads = -1"),
                std::string::npos);
    }
  }
}

// detail::force_parts(0) when a test that forces a count of parts ends, however it ends.
struct PartsUnforcedAtExit {
  ~PartsUnforcedAtExit() { detail::force_parts(0); }
};

// Every worker the process has started, and one more if none has, kept busy until destroyed: a
// call made meanwhile on several threads finds no worker free, so that its caller takes every
// token (workers.hpp, SharedRanges: its own range, then the others' from their backs) and its
// other parts are withdrawn (run_sharing).
class BusyWorkers {
 public:
  BusyWorkers() {
    thread_ = std::thread([this] {
      detail::run_sharing(parts_, [this](int i) {
        if (i > 0) ++busy_;
        while (!release_) std::this_thread::yield();  // part 0 too, so that none is withdrawn
      });
    });
    while (busy_ < parts_ - 1) std::this_thread::yield();
  }
  ~BusyWorkers() {
    release_ = true;
    thread_.join();
  }

 private:
  const int parts_ = std::max(2, detail::workers_started() + 1);  // a task per worker
  std::atomic<int> busy_{0};
  std::atomic<bool> release_{false};
  std::thread thread_;
};

// A thread's tokens rotated in several parts at once (rope.cpp, rotate_parts; on by default only
// in place beyond the caches of AMD family 19h and out of place with streamed outputs on Intel,
// forced here so that every machine runs it): 2, 3 and 4 parts give one part's bits, on 1 and 2
// threads, in place and out of place with streamed outputs, for rows the fixed kernels take
// (head_dim 128, every storage format; 256) and one they do not (a rotary span of 96 of 128), each
// layout, f32 also with the rows from a RopeCache. The calls take more tokens than a thread keeps
// rows for (rope.cpp, all_rows_kept: 512 at head_dim 128, 256 at 256, 682 at a span of 96), so
// that in place they go in parts and not in one pass: 600, 300 and 800 tokens, 17 fewer from the
// cache. (Sized for the sanitizers: 1100 tokens of every format and shape, 2, 3 and 4 parts on 1
// and 2 threads each, would take 46 s under ASan and most of TSan's 143, in place alone.) A count
// of parts out of range is refused.
TEST_P(FastPath, TokensInPartsAtOnceGiveTheBitsOfOnePart) {
  EXPECT_NE(error_of([] { detail::force_parts(detail::kMaxParts + 1); }).find("parts = 5"), std::string::npos);
  EXPECT_NE(error_of([] { detail::force_parts(-1); }).find("parts = -1"), std::string::npos);
  const PartsUnforcedAtExit unforce;
  struct Shape {
    std::int64_t head_dim, rotary_dim, tokens;
    std::vector<DType> formats;
  };
  // Out of place every streamed call goes in parts, rows kept or not: 151 tokens, 75 and 76 per
  // thread on 2 (67 each from the cache), give each thread a first piece of parts x 16 tokens
  // (workers.hpp, SharedRanges; rope.cpp, apply), enough for its parts (rotate_tokens: a piece
  // goes in parts from parts x 16 tokens on), and leave a rest after most splits.
  constexpr std::int64_t kStreamedTokens = 151;
  const Shape shapes[] = {{128, 128, 600, {DType::f32, DType::bf16, DType::f16}},
                          {256, 256, 300, {DType::f32, DType::bf16}},
                          {128, 96, 800, {DType::f32, DType::bf16}}};
  for (auto layout : {RopeLayout::interleaved, RopeLayout::half}) {
    for (const Shape& shape : shapes) {
      for (DType d : shape.formats) {
        const auto [head_dim, rotary_dim] = std::pair{shape.head_dim, shape.rotary_dim};
        const RopeParams p = yarn_rope(layout, head_dim, rotary_dim);
        const RopePlan plan(p);
        for (bool in_place : {true, false}) {
          const Batch b = random_batch(p, d, static_cast<std::uint32_t>(head_dim + rotary_dim), 8,
                                       in_place ? shape.tokens : kStreamedTokens);
          const RopeCache cache(plan, b.positions[17], b.tokens - 17, GetParam());
          // In place, or out of place into zeroed outputs with non-temporal stores.
          const auto rotated = [&](std::int64_t parts, int threads, bool cached) {
            detail::force_parts(parts);
            Bytes q_in = b.q, k_in = b.k;
            Bytes q = in_place ? Bytes{} : Bytes(b.q.size()), k = in_place ? Bytes{} : Bytes(b.k.size());
            Bytes& q_out = in_place ? q_in : q;
            Bytes& k_out = in_place ? k_in : k;
            RopeTensor qt = tensor(b, q_in, q_out), kt = tensor(b, k_in, k_out);
            kt.heads = 1;
            const Options options{GetParam(), threads, in_place ? Stores::automatic : Stores::streaming};
            if (cached) {
              const std::ptrdiff_t skip = 17 * b.heads * b.stride * static_cast<std::ptrdiff_t>(size_of(d));
              for (RopeTensor* t : {&qt, &kt}) {
                t->in = static_cast<const std::uint8_t*>(t->in) + skip;
                t->out = static_cast<std::uint8_t*>(t->out) + skip;
              }
              rope_apply(cache, d, b.tokens - 17, b.heads, b.positions.data() + 17, qt, kt, options);
            } else {
              rope_apply(plan, d, b.tokens, b.heads, b.positions.data(), qt, kt, options);
            }
            return std::pair{q_out, k_out};
          };
          for (bool cached : {false, true}) {
            if (cached && d != DType::f32) continue;
            const auto one = rotated(1, 1, cached);
            EXPECT_NE(one.first, in_place ? b.q : Bytes(b.q.size()));
            for (auto [parts, threads] : {std::pair{2, 1}, {3, 2}, {4, 2}}) {
              EXPECT_TRUE(rotated(parts, threads, cached) == one)
                  << to_string(GetParam()) << " " << to_string(d) << " head_dim " << head_dim << " rotary "
                  << rotary_dim << " parts " << parts << " threads " << threads << (cached ? " cached" : "")
                  << (in_place ? " in place" : " out of place");
            }
          }
        }
      }
    }
  }
}

// A kernel call takes a run of tokens (kernels.hpp, TokenRun; streamed, K's tokens of a block)
// and streams its outputs only if every token's rows allow it: rows 64-byte aligned within a
// token, but tokens one element apart beyond them, so that only the first token's rows are
// 16-byte aligned. In one part and in 4 at once (rope.cpp, rotate_parts; forced: streamed f32
// calls go in parts by default on Intel only), for which 130 tokens are enough on 2 threads.
TEST_P(FastPath, StreamedTokensOffTheAlignmentGiveTheSameBits) {
  const PartsUnforcedAtExit unforce;
  for (DType d : {DType::f32, DType::bf16}) {
    const RopeParams p = yarn_rope(RopeLayout::half, 128, 128);
    const RopePlan plan(p);
    const Batch b = random_batch(p, d, 11, d == DType::f32 ? 16 : 32, 130);
    const std::int64_t token_stride = b.heads * b.stride + 1;
    const auto bytes = static_cast<std::size_t>(b.tokens * token_stride) * size_of(d);
    const auto widened = [&](const Bytes& from) {
      Bytes x(bytes);  // the batch's bytes, then zeros: inputs laid out one element wider per token
      std::copy(from.begin(), from.end(), x.begin());
      return x;
    };
    const Bytes q_in = widened(b.q), k_in = widened(b.k);
    const auto view = [&](const Bytes& from, Bytes& to) {
      RopeTensor t = tensor(b, from, to);
      t.in_token_stride = t.out_token_stride = token_stride;
      return t;
    };
    Bytes q0(bytes), k0(bytes);
    rope_apply(plan, d, b.tokens, b.heads, b.positions.data(), view(q_in, q0), view(k_in, k0), {Isa::scalar, 1});
    for (std::int64_t parts : {1, 4}) {
      detail::force_parts(parts);
      for (int threads : {1, 2}) {
        Bytes q(bytes), k(bytes);
        rope_apply(plan, d, b.tokens, b.heads, b.positions.data(), view(q_in, q), view(k_in, k), {GetParam(), threads, Stores::streaming});
        EXPECT_EQ(q, q0) << to_string(d) << " " << threads << " threads, " << parts << " parts";
        EXPECT_EQ(k, k0) << to_string(d) << " " << threads << " threads, " << parts << " parts";
      }
    }
  }
}

// With every worker busy (BusyWorkers), a call on 2 or 3 threads is rotated by its caller alone,
// its own range in halving pieces and then the others' from their backs (workers.hpp,
// SharedRanges), each thread's kept rows (rope.cpp, FusedRows) serving every piece it takes: the
// bits of one thread, with cached and streamed stores, the second call of each at the same
// positions (its rows kept).
TEST_P(FastPath, ACallWhoseWorkersAreBusyGivesOneThreadsBits) {
  const RopeParams p = yarn_rope(RopeLayout::half, 128, 128);
  const RopePlan plan(p);
  const Batch b = random_batch(p, DType::f32, 23, 0, 300);
  Bytes want_q(b.q.size()), want_k(b.k.size());
  rope_apply(plan, DType::f32, b.tokens, b.heads, b.positions.data(), tensor(b, b.q, want_q), tensor(b, b.k, want_k),
             {Isa::scalar, 1});
  const BusyWorkers busy;
  for (int threads : {2, 3}) {
    for (Stores stores : {Stores::cached, Stores::streaming}) {
      for (int call = 0; call < 2; ++call) {
        Bytes q(b.q.size()), k(b.k.size());
        rope_apply(plan, DType::f32, b.tokens, b.heads, b.positions.data(), tensor(b, b.q, q), tensor(b, b.k, k),
                   {GetParam(), threads, stores});
        const std::string where = std::to_string(threads) + " threads, stores " +
                                  std::to_string(static_cast<int>(stores)) + ", call " + std::to_string(call);
        EXPECT_EQ(q, want_q) << where;
        EXPECT_EQ(k, want_k) << where;
      }
    }
  }
}

#ifdef POSENC_CONFIGURE_READ_AVX512
// A sanitized build leaves the real AVX-512 kernels uninstrumented where its configure read no
// AVX-512 (fast/CMakeLists.txt): a reading that differed from the dispatcher's would let them
// run unchecked.
TEST(Fast, TheSanitizedBuildReadAvx512AsTheDispatcherDoes) {
  EXPECT_EQ(isa_supported(Isa::avx512), POSENC_CONFIGURE_READ_AVX512 != 0);
}
#endif

// The anchor's sin/cos a thread keeps between calls (rope.cpp, last_anchor) belong to their plan:
// two plans at one position, called in turn, and a plan built where the last one was, each give
// their own cache's bits (RopeCache rows never use the kept anchor).
TEST(Fast, TheKeptAnchorBelongsToItsPlan) {
  const std::int64_t position = 4103;
  std::vector<float> x(128, 0.75f), y(128), z(128);
  RopeTensor t;
  t.in = x.data();
  t.in_token_stride = t.out_token_stride = t.in_head_stride = t.out_head_stride = 128;
  const auto check = [&](const RopePlan& plan) {
    const RopeCache cache(plan, position, 1, Isa::scalar);
    t.out = y.data();
    rope_apply(plan, DType::f32, 1, 1, &position, t, {}, {Isa::scalar});
    t.out = z.data();
    rope_apply(cache, DType::f32, 1, 1, &position, t, {}, {Isa::scalar});
    EXPECT_EQ(y, z) << "base " << plan.params().base;
  };
  RopeParams p = yarn_rope(RopeLayout::half, 128, 128);
  const RopePlan first(p);
  p.base = 10000;
  const RopePlan second(p);
  for (int round = 0; round < 2; ++round) {
    check(first);
    check(second);
  }
  for (double base : {20000.0, 30000.0}) {
    p.base = base;
    check(RopePlan(p));
  }
}

// What a thread keeps between calls (rope.cpp: its last rows and anchors) is used only where it
// is the same: calls at one position, at positions sharing an anchor or a coarse anchor, moving
// back, and M-RoPE calls of one token at other positions each give the bits a fresh thread
// (nothing kept) gives.
TEST(Fast, KeptRowsAndAnchorsGiveAFreshThreadsBits) {
  RopeParams single = yarn_rope(RopeLayout::half, 64, 64), mrope = single;
  mrope.scaling = {};
  mrope.mrope_section = {16, 8, 8};
  for (const RopeParams& p : {single, mrope}) {
    const RopePlan plan(p);
    const std::int64_t axes = p.position_axes();
    std::vector<float> x(3 * 64);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.25f + static_cast<float>(i % 7);
    const auto rotate = [&](const std::vector<std::int64_t>& positions, Isa isa) {
      std::vector<float> y(x.size());
      RopeTensor t;
      t.in = x.data();
      t.out = y.data();
      t.in_token_stride = t.out_token_stride = t.in_head_stride = t.out_head_stride = 64;
      rope_apply(plan, DType::f32, 1, 3, positions.data(), t, {}, {isa});
      return y;
    };
    for (Isa isa : supported_isas()) {
      for (std::int64_t at : {5000, 5000, 5001, 5016, 5017, 5017, 5260, 5000, 4999, -3}) {
        const std::vector<std::int64_t> positions(static_cast<std::size_t>(axes), at);
        std::vector<std::int64_t> shifted = positions;
        shifted.back() += 7;  // M-RoPE: another position on one axis only
        for (const auto& pos : {positions, shifted}) {
          std::vector<float> fresh;
          std::thread([&] { fresh = rotate(pos, Isa::scalar); }).join();
          EXPECT_EQ(rotate(pos, isa), fresh) << to_string(isa) << " axes " << axes << " position " << pos.back();
        }
      }
    }
  }
}

// A call whose rows fit in what a thread keeps (rope.cpp, all_rows_kept: 512 rows at head_dim
// 128) keeps one per token, which the next call reuses where plan and position are the same (the
// layers of a forward pass): calls in turn at the same, shifted and reversed positions, with
// another plan, and around a call too long to keep every row, each give a RopeCache's bits.
TEST(Fast, RowsKeptAcrossCallsGiveACachesBits) {
  RopeParams p = yarn_rope(RopeLayout::half, 128, 128);
  const RopePlan plan(p);
  p.base = 20000;
  const RopePlan other(p);
  std::vector<float> x(700 * 128);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.25f + static_cast<float>(i % 13) / 8;
  std::vector<std::int64_t> first(40), long_call(700);
  std::iota(first.begin(), first.end(), 1000);
  std::iota(long_call.begin(), long_call.end(), 990);
  std::vector<std::int64_t> shifted = first, reversed(first.rbegin(), first.rend());
  for (auto& position : shifted) position += 1;
  const std::vector<std::pair<const RopePlan*, const std::vector<std::int64_t>*>> calls{
      {&plan, &first}, {&plan, &first},     {&plan, &shifted}, {&plan, &reversed},
      {&other, &reversed}, {&plan, &long_call}, {&plan, &first}, {&other, &first}};
  for (Isa isa : supported_isas()) {
    for (std::size_t i = 0; i < calls.size(); ++i) {
      const auto& [pl, positions] = calls[i];
      EXPECT_EQ(rotated(*pl, *positions, x, false, Options{isa}), rotated(*pl, *positions, x, false, std::nullopt))
          << to_string(isa) << " call " << i;
    }
  }
}

// A streaming call too long to keep every row (all_rows_kept) keeps one per token where it repeats
// the thread's last call (rope.cpp, kRepeatedStreamRowBytes): its first position, token count and
// plan. Calls in turn that repeat one (the layers of a forward pass), that repeat it but for one
// position, or its first position only, that move, that take another plan, a longer call and one
// in place, on 1 and 2 threads, each give a RopeCache's bits.
TEST(Fast, RowsKeptByARepeatedStreamingCallGiveACachesBits) {
  RopeParams p = yarn_rope(RopeLayout::half, 64, 64);
  const RopePlan plan(p);
  p.base = 20000;
  const RopePlan other(p);
  constexpr std::int64_t kTokens = 1100;  // at head_dim 64, beyond all_rows_kept's 1024
  std::vector<float> x(2 * kTokens * 64);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.25f + static_cast<float>(i % 13) / 8;
  std::vector<std::int64_t> base(kTokens), longer(2 * kTokens);
  std::iota(base.begin(), base.end(), 5000);
  std::iota(longer.begin(), longer.end(), 5000);
  std::vector<std::int64_t> one_moved = base, first_kept = base, moved = base;
  one_moved[700] += 3;
  for (std::size_t i = 1; i < first_kept.size(); ++i) first_kept[i] += 17;
  for (auto& position : moved) position += 1;
  struct Call {
    const RopePlan* plan;
    const std::vector<std::int64_t>* positions;
    bool in_place;
  };
  const std::vector<Call> calls{{&plan, &base, false},      {&plan, &base, false},      {&plan, &base, false},
                                {&plan, &one_moved, false}, {&plan, &base, false},      {&plan, &first_kept, false},
                                {&plan, &first_kept, false}, {&plan, &moved, false},    {&plan, &moved, false},
                                {&other, &moved, false},    {&plan, &moved, false},     {&plan, &longer, false},
                                {&plan, &longer, false},    {&plan, &base, true},       {&plan, &base, false}};
  for (Isa isa : supported_isas()) {
    for (int threads : {1, 2}) {
      for (std::size_t i = 0; i < calls.size(); ++i) {
        const Call& c = calls[i];
        EXPECT_EQ(rotated(*c.plan, *c.positions, x, c.in_place, Options{isa, threads, Stores::streaming}),
                  rotated(*c.plan, *c.positions, x, c.in_place, std::nullopt))
            << to_string(isa) << " threads " << threads << " call " << i;
      }
    }
  }
}

TEST(Fast, BadCallsAreRefusedWithTheParameterNamed) {
  const RopePlan plan(yarn_rope(RopeLayout::half, 8, 8));
  std::vector<float> x(8), y(8);
  RopeTensor q;
  q.in = x.data();
  q.out = y.data();
  const std::int64_t far = kMaxPosition + 1;
  EXPECT_NE(error_of([&] { rope_apply(plan, DType::f32, 1, 1, &far, q, {}); }).find("rope.position = 4294967297"), std::string::npos);
  EXPECT_NE(error_of([&] { rope_apply(plan, DType::f32, 1, 0, &far, q, {}); }).find("n_heads = 0"), std::string::npos);
  const std::int64_t zero = 0;
  EXPECT_NE(error_of([&] { rope_apply(plan, DType::f32, 1, 1, &zero, q, {}, {Isa::scalar, 0}); }).find("threads = 0"), std::string::npos);
  EXPECT_NE(error_of([&] { rope_apply(plan, DType::f32, 1, 1, nullptr, q, {}); }).find("positions"), std::string::npos);
  RopeTensor no_out = q, k_no_out = q, bad_heads = q;
  no_out.out = nullptr;
  k_no_out.out = nullptr;
  bad_heads.heads = -2;
  EXPECT_NE(error_of([&] { rope_apply(plan, DType::f32, 1, 1, &zero, no_out, {}); }).find("q.in/out = null"), std::string::npos);
  EXPECT_NE(error_of([&] { rope_apply(plan, DType::f32, 1, 1, &zero, q, k_no_out); }).find("k.in/out = null"), std::string::npos);
  EXPECT_NE(error_of([&] { rope_apply(plan, DType::f32, 1, 1, &zero, bad_heads, {}); }).find("q.heads = -2"), std::string::npos);
  const RopeCache cache(plan, 10, 5, Isa::scalar);
  const std::int64_t outside = 15;
  EXPECT_NE(error_of([&] { rope_apply(cache, DType::f32, 1, 1, &outside, q, {}); }).find("in the cache's range [10, 14]"), std::string::npos);
  LearnedParams l;
  l.max_positions = 4;
  l.dim = 2;
  std::vector<float> table(8), row(2);
  const std::int64_t four = 4;
  EXPECT_NE(error_of([&] { learned_lookup(l, table, {&four, 1}, row); }).find("learned.position = 4"), std::string::npos);
  RopeParams bad = yarn_rope(RopeLayout::half, 7, 6);
  EXPECT_NE(error_of([&] { RopePlan p(bad); }).find("rope.head_dim = 7"), std::string::npos);
}

// A call of no tokens is valid (positions may then be null) and writes nothing, on every path,
// with K or without, out of place and in place (rope.cpp, rotate_tokens: no run is made for it).
TEST(Fast, ACallOfNoTokensWritesNothing) {
  const RopePlan plan(yarn_rope(RopeLayout::half, 8, 8));
  for (Isa isa : supported_isas()) {
    std::vector<float> in(32, 1.0f), out(32, 7.0f), k_in(32, 2.0f), k_out(32, 9.0f);
    const RopeTensor q = strided(in.data(), out.data(), 16, 8), k = strided(k_in.data(), k_out.data(), 16, 8);
    EXPECT_NO_THROW(rope_apply(plan, DType::f32, 0, 2, nullptr, q, k, {isa, 1}));
    EXPECT_NO_THROW(rope_apply(plan, DType::f32, 0, 2, nullptr, q, {}, {isa, 2}));
    RopeTensor in_place = q;
    in_place.out = in.data();
    EXPECT_NO_THROW(rope_apply(plan, DType::f32, 0, 2, nullptr, in_place, {}, {isa, 1}));
    EXPECT_EQ(out, std::vector<float>(32, 7.0f)) << to_string(isa);
    EXPECT_EQ(k_out, std::vector<float>(32, 9.0f)) << to_string(isa);
    EXPECT_EQ(in, std::vector<float>(32, 1.0f)) << to_string(isa);
  }
}

// A thread keeps its last call of one block of tokens, checked (rope.cpp, LastBlockCall), for the
// next with the same arguments. A call like the last one in all but one argument, made invalid,
// is refused all the same, on every path, through a plan or a cache, and writes nothing: the kept
// call is never taken for one whose arguments differ. (An ISA this CPU lacks is one such
// argument: checked where it does.)
TEST(Fast, ACallLikeTheLastButOneBadArgumentIsRefused) {
  const RopePlan plan(yarn_rope(RopeLayout::half, 8, 8)), wider(yarn_rope(RopeLayout::half, 16, 16));
  std::vector<float> buf(64, 1.0f), other(64, 2.0f), k_in(64, 3.0f), k_out(64, 4.0f);
  const std::vector<std::int64_t> good_positions{5, 6}, bad_positions{5, (std::int64_t{1} << 32) + 1};
  const auto view = [](float* in, float* out) { return strided(in, out, 16, 8); };
  struct Call {
    const RopePlan* plan;
    DType d;
    std::int64_t n_heads;
    const std::int64_t* positions;
    RopeTensor q, k;
    Options options;
  };
  const auto apply = [](const Call& c) { rope_apply(*c.plan, c.d, 2, c.n_heads, c.positions, c.q, c.k, c.options); };
  std::vector<Isa> isas = supported_isas();
  for (Isa isa : isas) {
    const Call good{&plan, DType::f32, 2, good_positions.data(), view(other.data(), buf.data()),
                    view(k_in.data(), k_out.data()), {isa, 1}};
    const auto refused = [&](const std::string& needle, auto change) {
      apply(good);
      const std::vector<float> before = buf, k_before = k_out;
      Call bad = good;
      change(bad);
      const std::string e = error_of([&] { apply(bad); });
      EXPECT_NE(e.find(needle), std::string::npos) << to_string(isa) << ": expected '" << needle << "', got '" << e << "'";
      EXPECT_EQ(buf, before) << to_string(isa) << ", " << needle << ": a refused call wrote";
      EXPECT_EQ(k_out, k_before) << to_string(isa) << ", " << needle << ": a refused call wrote";
    };
    refused("n_heads", [](Call& c) { c.n_heads = 0; });
    refused("dtype", [](Call& c) { c.d = static_cast<DType>(7); });
    refused("rope.position", [&](Call& c) { c.positions = bad_positions.data(); });
    refused("positions", [](Call& c) { c.positions = nullptr; });
    refused("q.out strides", [&](Call& c) { c.plan = &wider; });  // head_dim 16 rows 8 apart overlap
    refused("q.heads", [](Call& c) { c.q.heads = -1; });
    refused("k.heads", [](Call& c) { c.k.heads = -1; });
    refused("q.out_head_stride = 0", [](Call& c) { c.q.out_head_stride = 0; });
    refused("q.out strides", [](Call& c) { c.q.out_token_stride = 8; });
    refused("q.in and q.out", [&](Call& c) { c.q.in = buf.data() + 4; });
    refused("q.in/out", [](Call& c) { c.q.out = nullptr; });
    refused("k.in/out", [](Call& c) { c.k.out = nullptr; });
    refused("q.in = 128 bytes from its base", [](Call& c) {
      c.q.in = reinterpret_cast<float*>(static_cast<std::uintptr_t>(PTRDIFF_MAX) / 64 * 64 - 64);
    });
    refused("q.out and k.out", [&](Call& c) { c.k.out = buf.data() + 8; });
    refused("q.out and k.in", [&](Call& c) { c.k.in = buf.data(); });
    refused("threads", [](Call& c) { c.options.threads = 0; });
    // Through a cache: a position outside it, after a good call.
    const RopeCache cache(plan, 5, 2, isa);
    const std::vector<std::int64_t> outside{5, 7};
    rope_apply(cache, DType::f32, 2, 2, good_positions.data(), good.q, good.k, good.options);
    const std::vector<float> before = buf;
    const std::string e = error_of([&] { rope_apply(cache, DType::f32, 2, 2, outside.data(), good.q, good.k, good.options); });
    EXPECT_NE(e.find("in the cache's range"), std::string::npos) << to_string(isa) << ": got '" << e << "'";
    EXPECT_EQ(buf, before) << to_string(isa) << ": a refused call through a cache wrote";
    for (Isa lacking : {Isa::avx2, Isa::avx512}) {
      if (std::find(isas.begin(), isas.end(), lacking) == isas.end()) refused("isa", [&](Call& c) { c.options.isa = lacking; });
    }
  }
}

// ... and a call like the last one in all but one argument, changed to another valid value,
// gives the bits of the same call on a fresh thread (nothing kept): other tensors, token and head
// counts, K or none, in place, another plan, another path.
TEST(Fast, ACallLikeTheLastButOneArgumentGivesAFreshThreadsBits) {
  RopeParams p = yarn_rope(RopeLayout::half, 16, 16);
  const RopePlan plan(p);
  p.base = 10000;
  const RopePlan other_plan(p);
  std::vector<float> start(6 * 96);  // six tensors of 3 tokens x 2 heads x 16
  for (std::size_t i = 0; i < start.size(); ++i) start[i] = 0.25f + static_cast<float>(i % 11) / 4;
  std::vector<float> buffers = start;
  float* const x = buffers.data();
  const std::vector<std::int64_t> positions{4099, 4100, 4101};
  const auto view = [](float* in, float* out) { return strided(in, out, 32, 16); };
  struct Call {
    const RopePlan* plan;
    std::int64_t n_tokens, n_heads;
    RopeTensor q, k;
    Isa isa;
  };
  for (Isa isa : supported_isas()) {
    std::vector<Call> calls{{&plan, 1, 2, view(x, x + 96), view(x + 192, x + 288), isa}};
    const auto then = [&](auto change) {
      Call c = calls.back();
      change(c);
      calls.push_back(c);
    };
    then([&](Call& c) { c.q.out = x + 384; });
    then([&](Call& c) { c.q.in = x + 480; });
    then([&](Call& c) {  // every tensor elsewhere, Q and K swapped
      std::swap(c.q, c.k);
    });
    then([&](Call& c) { std::swap(c.q, c.k); });
    then([](Call& c) { c.n_tokens = 3; });
    then([](Call& c) { c.n_heads = 1; });
    then([](Call& c) { c.k.heads = 2; });
    then([](Call& c) { c.k = {}; });
    then([](Call& c) { c.q.out = const_cast<void*>(c.q.in); });  // in place
    then([&](Call& c) { c.plan = &other_plan; });
    then([&](Call& c) { c.isa = isa == Isa::scalar ? supported_isas().back() : Isa::scalar; });
    for (std::size_t i = 0; i < calls.size(); ++i) {
      const Call& c = calls[i];
      const auto apply = [&] { rope_apply(*c.plan, DType::f32, c.n_tokens, c.n_heads, positions.data(), c.q, c.k, {c.isa}); };
      buffers = start;
      apply();
      const std::vector<float> here = buffers;
      buffers = start;
      std::thread(apply).join();
      EXPECT_EQ(here, buffers) << to_string(isa) << ", call " << i;
      EXPECT_NE(here, start) << to_string(isa) << ", call " << i << " wrote nothing";
    }
  }
}

// Sizes, strides and aliasing are checked before anything is touched; nothing here may crash or
// write (the buffers are small: an unchecked call would write far outside them).
TEST(Fast, BadLayoutsAreRefusedBeforeAnyWrite) {
  const RopePlan plan(yarn_rope(RopeLayout::interleaved, 8, 8));
  std::vector<float> buf(64, 1.0f), other(64, 2.0f);
  const std::vector<float> before = buf;
  const std::vector<std::int64_t> pos(4, 3);
  const auto view = strided;
  auto refused = [&](const std::string& needle, std::int64_t tokens, std::int64_t heads, const RopeTensor& q,
                     const RopeTensor& k = {}) {
    const std::string e = error_of([&] { rope_apply(plan, DType::f32, tokens, heads, pos.data(), q, k); });
    EXPECT_NE(e.find(needle), std::string::npos) << "expected '" << needle << "', got '" << e << "'";
  };
  auto out_only = view(other.data(), buf.data(), 16, 8);
  out_only.out_token_stride = -16;
  refused("q.out_token_stride = -16", 2, 2, out_only);
  refused("q.in_head_stride = 0", 2, 2, view(other.data(), buf.data(), 16, 0));
  refused("q.out strides", 2, 2, view(other.data(), buf.data(), 8, 4));  // rows overlap
  const std::int64_t huge = std::int64_t{1} << 62;
  refused("q.in extent", 3, 1, view(other.data(), buf.data(), huge, 8));  // 2 * 2^62 overflows
  // An input whose extent (128 bytes) runs past the top of the address space (it starts 127
  // bytes below PTRDIFF_MAX): refused before anything is read.
  auto* const top = reinterpret_cast<float*>(static_cast<std::uintptr_t>(PTRDIFF_MAX) / 64 * 64 - 64);
  refused("q.in = 128 bytes from its base", 2, 2, view(top, buf.data(), 16, 8));
  refused("n_tokens", huge, 1, view(other.data(), buf.data(), 8, 8));
  // In place the output's view alone is checked (rope.cpp, check_layout): the same refusals.
  refused("q.out_head_stride = 0", 2, 2, view(buf.data(), buf.data(), 16, 0));
  refused("q.out strides", 2, 2, view(buf.data(), buf.data(), 8, 4));
  refused("q.out extent", 3, 1, view(buf.data(), buf.data(), huge, 8));
  // Q and K overlapping, an output over the other tensor's input, in and out half-overlapping.
  refused("q.out and k.out", 2, 2, view(other.data(), buf.data(), 16, 8), view(other.data() + 32, buf.data() + 8, 16, 8));
  refused("q.out and k.in", 2, 1, view(other.data(), buf.data(), 8, 8), view(buf.data() + 8, other.data() + 40, 8, 8));
  refused("q.in and q.out", 2, 1, view(buf.data(), buf.data() + 4, 8, 8));
  // Grouped-query: K of 1 head placed over Q's second head of each token.
  auto gqa_k = view(buf.data() + 8, buf.data() + 8, 24, 8);
  gqa_k.heads = 1;
  refused("q.out and k.out", 2, 2, view(buf.data(), buf.data(), 24, 8), gqa_k);
  // Grouped-query: K of 1 head after Q's 2 with the same token stride, but a token's K row
  // reaching into the next token's Q (token stride 20 < 2 Q rows + 1 K row).
  gqa_k = view(buf.data() + 16, buf.data() + 16, 20, 8);
  gqa_k.heads = 1;
  refused("q.out and k.out", 2, 2, view(buf.data(), buf.data(), 20, 8), gqa_k);
  EXPECT_EQ(buf, before) << "a refused call wrote";
  // Accepted: in place, and Q and K interleaved in one fused buffer ([token][q heads, k heads]).
  EXPECT_NO_THROW(rope_apply(plan, DType::f32, 2, 2, pos.data(), view(buf.data(), buf.data(), 32, 8),
                             view(buf.data() + 16, buf.data() + 16, 32, 8)));
  EXPECT_NO_THROW(rope_apply(plan, DType::f32, 2, 2, pos.data(), view(buf.data(), buf.data(), 8, 16), {}));  // [head][token]
  // Grouped-query in one fused buffer: [token][2 Q heads, 1 K head], out of place.
  std::vector<float> fused_in(48, 1.0f);
  auto gqa_q = view(fused_in.data(), buf.data(), 24, 8);
  auto gqa_k_ok = view(fused_in.data() + 16, buf.data() + 16, 24, 8);
  gqa_k_ok.heads = 1;
  EXPECT_NO_THROW(rope_apply(plan, DType::f32, 2, 2, pos.data(), gqa_q, gqa_k_ok));
  AlibiParams a;
  a.n_heads = 2;
  std::vector<float> scores(16);
  EXPECT_NE(error_of([&] { alibi_add_bias(a, {scores, 2, 4, 4, 2, 0, 0}); }).find("scores strides"), std::string::npos);
  EXPECT_NE(error_of([&] { alibi_add_bias(a, {scores, 2, 4, -8, 4, 0, 0}); }).find("scores.head_stride = -8"), std::string::npos);
}

// A cache keeps its own plan: one built from a temporary is still valid when the temporary is
// gone (a cache that kept a reference would read a destroyed plan here, which ASan reports).
TEST(Fast, ACacheBuiltFromATemporaryPlanOwnsIt) {
  const RopeParams p = yarn_rope(RopeLayout::interleaved, 64, 64);
  const RopeCache cache(RopePlan(p), 1000, 64, Isa::scalar);
  const RopePlan plan(p);
  const Batch b = random_batch(p, DType::f32, 17, 0);
  std::vector<std::int64_t> near(b.positions.size());
  for (std::size_t t = 0; t < near.size(); ++t) near[t] = 1000 + static_cast<std::int64_t>(t * 7 % 64);
  Bytes fused(b.q.size()), cached(b.q.size());
  rope_apply(plan, DType::f32, b.tokens, b.heads, near.data(), tensor(b, b.q, fused), {}, {Isa::scalar, 1});
  rope_apply(cache, DType::f32, b.tokens, b.heads, near.data(), tensor(b, b.q, cached), {}, {Isa::scalar, 1});
  EXPECT_NE(fused, b.q);
  EXPECT_EQ(cached, fused);
  ASSERT_EQ(cache.plan().pairs(), plan.pairs());
  for (std::int64_t i = 0; i < plan.pairs(); ++i) EXPECT_EQ(cache.plan().inv_freq(i), plan.inv_freq(i));
}

// POSENC_ISA is read once per process, so this runs in a fresh one ("threadsafe" death tests
// re-run the binary for this test alone). A bad value must fail the call that resolves the ISA,
// with POSENC_ISA's value named, and not the construction of an Options. The child prints the
// errors of two calls, the second after POSENC_ISA is unset (read once: it still sees avx9).
void bad_posenc_isa_child() {
  setenv("POSENC_ISA", "avx9", 1);
  std::string errors;
  try {
    const Options options{};
    const RopePlan plan(yarn_rope(RopeLayout::half, 8, 8));
    std::vector<float> x(8), y(8);
    RopeTensor q;
    q.in = x.data();
    q.out = y.data();
    const std::int64_t zero = 0;
    errors = error_of([&] { rope_apply(plan, DType::f32, 1, 1, &zero, q, {}, options); });
    unsetenv("POSENC_ISA");
    errors += "\n" + error_of([] { (void)selected_isa(); });
  } catch (const std::exception& e) {
    errors = std::string("Options{} threw: ") + e.what();
  }
  std::fprintf(stderr, "%s\n", errors.c_str());
  std::exit(0);
}

TEST(FastDeathTest, ABadPosencIsaFailsTheCallNotTheOptions) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(bad_posenc_isa_child(), testing::ExitedWithCode(0),
              "invalid POSENC_ISA = 'avx9': must be one of scalar, avx2, avx512\n"
              "invalid POSENC_ISA = 'avx9': must be one of scalar, avx2, avx512\n");
}

// A refused call writes nothing: every position is checked before the first row (the rows
// before a bad position are not half-done work left in the caller's buffer).
TEST(Fast, ABadPositionInTheMiddleLeavesTheOutputUntouched) {
  SinusoidalParams sp;
  sp.d_model = 6;
  const std::vector<std::int64_t> negative{0, 5, -1, 7}, far{0, 5, kMaxPosition + 1, 7};
  std::vector<float> out(24);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = 100.0f + static_cast<float>(i);
  const std::vector<float> pattern = out;
  EXPECT_NE(error_of([&] { sinusoidal_table(sp, negative, out, Isa::scalar); }).find("sinusoidal.position = -1"), std::string::npos);
  EXPECT_EQ(out, pattern) << "sinusoidal_table wrote before refusing";
  EXPECT_NE(error_of([&] { sinusoidal_table(sp, far, out, Isa::scalar); }).find("sinusoidal.position = 4294967297"), std::string::npos);
  EXPECT_EQ(out, pattern) << "sinusoidal_table wrote before refusing";
  EXPECT_NE(error_of([&] { sinusoidal_embed(sp, negative, out, Isa::scalar); }).find("sinusoidal.position = -1"), std::string::npos);
  EXPECT_EQ(out, pattern) << "sinusoidal_embed wrote before refusing";
  LearnedParams l;
  l.max_positions = 4;
  l.dim = 6;
  const std::vector<float> table(24, 1.0f);
  const std::vector<std::int64_t> outside{0, 1, 4, 2};
  EXPECT_NE(error_of([&] { learned_lookup(l, table, outside, out); }).find("learned.position = 4"), std::string::npos);
  EXPECT_EQ(out, pattern) << "learned_lookup wrote before refusing";
  // And the same calls with good positions do write.
  const std::vector<std::int64_t> good{0, 5, 1, 7};
  sinusoidal_table(sp, good, out, Isa::scalar);
  EXPECT_NE(out, pattern);
}

// Outputs (and the learned table) are spans that must hold exactly what the call writes (reads).
TEST(Fast, SpansMustHoldExactlyWhatTheCallWrites) {
  SinusoidalParams sp;
  sp.d_model = 6;
  const std::vector<std::int64_t> two{0, 1};
  std::vector<float> short_row(11, 7.0f), long_row(13, 7.0f);
  const std::vector<float> untouched(13, 7.0f);
  auto refused = [](const std::string& needle, const std::function<void()>& call) {
    const std::string e = error_of(call);
    EXPECT_NE(e.find(needle), std::string::npos) << "expected '" << needle << "', got '" << e << "'";
  };
  refused("invalid out = 11 floats: must be exactly 12 floats (2 x 6)", [&] { sinusoidal_table(sp, two, short_row, Isa::scalar); });
  refused("invalid out = 13 floats: must be exactly 12 floats (2 x 6)", [&] { sinusoidal_table(sp, two, long_row, Isa::scalar); });
  refused("invalid x = 13 floats: must be exactly 12 floats (2 x 6)", [&] { sinusoidal_embed(sp, two, long_row, Isa::scalar); });
  EXPECT_EQ(long_row, untouched);
  LearnedParams l;
  l.max_positions = 4;
  l.dim = 2;
  std::vector<float> table(8), row(3);
  const std::int64_t one = 1;
  refused("invalid out = 3 floats: must be exactly 2 floats (1 x 2)", [&] { learned_lookup(l, table, {&one, 1}, row); });
  refused("invalid table = 7 floats: must be exactly 8 floats (4 x 2)",
          [&] { learned_lookup(l, std::span(table).first(7), {&one, 1}, std::span(row).first(2)); });
  const RopePlan plan(yarn_rope(RopeLayout::half, 8, 8));
  std::vector<float> c(4), s(5);
  refused("invalid sin_out = 5 floats: must be exactly 4 floats (1 x 4)", [&] { plan.table_row({&one, 1}, c, s, Isa::scalar); });
  refused("invalid cos_out = 3 floats: must be exactly 4 floats (1 x 4)",
          [&] { plan.table_row({&one, 1}, std::span(c).first(3), std::span(s).first(4), Isa::scalar); });
  // ALiBi's scores must span the view's extent: 2 heads x 2 queries x 4 keys, head stride 8.
  AlibiParams a;
  a.n_heads = 2;
  std::vector<float> scores(16, 1.0f);
  const std::vector<float> before = scores;
  refused("invalid scores = 15 floats: must be at least the view's extent, 16 floats",
          [&] { alibi_add_bias(a, {std::span(scores).first(15), 2, 4, 8, 4, 0, 0}); });
  EXPECT_EQ(scores, before);
  alibi_add_bias(a, {.scores = scores, .n_query = 2, .n_key = 4, .head_stride = 8, .query_stride = 4, .first_query = 3,
                     .first_key = 0});
  const std::vector<float> m = alibi_slopes(a);
  EXPECT_EQ(scores[1], static_cast<float>(1.0f - 2 * m[0]));  // head 0, query 3, key 1: distance 2
  EXPECT_EQ(scores[8 + 4 + 0], static_cast<float>(1.0f - 4 * m[1]));  // head 1, query 4, key 0: distance 4
}


// The kept workers (fast/src/workers.hpp): part 0 runs on the caller and each part at most once;
// the work shared by SharedRanges is all done, each index once; a part's exception reaches the
// caller after the started parts have finished; a part no worker has started when part 0 returns
// is withdrawn, never run; callers on several threads at once share the workers; a forked child,
// which has none of its parent's workers, starts its own (a child waiting on its parent's would
// hang: the test would time out).
TEST(Workers, PartsShareTheWorkAndRunAtMostOnce) {
  for (int parts : {1, 2, 5}) {
    for (std::int64_t n : {0, 7, 1000}) {
      std::vector<std::atomic<int>> runs(static_cast<std::size_t>(parts)), done(static_cast<std::size_t>(n));
      const auto caller = std::this_thread::get_id();
      bool part0_on_caller = false;
      detail::SharedRanges ranges(n, parts, 16);
      detail::run_sharing(parts, [&](int i) {
        ++runs[static_cast<std::size_t>(i)];
        if (i == 0) part0_on_caller = std::this_thread::get_id() == caller;
        for (std::int64_t b = 0, e = 0; ranges.next(i, b, e);) {
          for (std::int64_t t = b; t < e; ++t) ++done[static_cast<std::size_t>(t)];
        }
      });
      EXPECT_TRUE(part0_on_caller);
      EXPECT_EQ(runs[0], 1);
      for (const auto& r : runs) EXPECT_LE(r, 1) << parts << " parts";
      for (std::int64_t t = 0; t < n; ++t) EXPECT_EQ(done[static_cast<std::size_t>(t)], 1) << "index " << t << " of " << n;
    }
  }
}

TEST(Workers, ErrorsReachTheCallerAfterTheStartedParts) {
  std::atomic<int> started{0}, finished{0};
  EXPECT_THROW(detail::run_sharing(3,
                                   [&](int i) {
                                     ++started;
                                     // Part 0 returns only when the others have started, so
                                     // that none is withdrawn.
                                     while (i == 0 && started < 3) std::this_thread::yield();
                                     if (i == 2) throw InvalidParameter("part", "2", "a test's error");
                                     if (i == 1) std::this_thread::sleep_for(std::chrono::milliseconds(20));
                                     ++finished;
                                   }),
               InvalidParameter);
  EXPECT_EQ(finished, 2) << "run_sharing returned before its started parts finished";
}

// With every worker busy in another call, a call's part 1 waits in the queue: once its part 0 has
// returned, or thrown, the call returns without it, and it never runs.
TEST(Workers, APartNoWorkerStartedIsWithdrawn) {
  std::atomic<int> part1_runs{0}, returned{0};
  std::vector<std::thread> calls;
  {
    const BusyWorkers busy;
    calls.emplace_back([&] {
      detail::run_sharing(2, [&](int i) {
        if (i == 1) ++part1_runs;
      });
      ++returned;
    });
    calls.emplace_back([&] {
      EXPECT_THROW(detail::run_sharing(2,
                                       [&](int i) {
                                         if (i == 1) ++part1_runs;
                                         if (i == 0) throw InvalidParameter("part", "0", "a test's error");
                                       }),
                   InvalidParameter);
      ++returned;
    });
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (returned < 2 && std::chrono::steady_clock::now() < until) std::this_thread::yield();
    EXPECT_EQ(returned, 2) << "a call waited for a part no worker could start";
  }  // the workers free again: a part left queued would run now
  for (auto& t : calls) t.join();
  EXPECT_EQ(part1_runs, 0) << "a withdrawn part ran";
}

// SharedRanges's rule, over random orders of the parts' requests: part i takes its own range
// from the front, then from the back of the range with the most left; each piece half of what
// is left, rounded up to a multiple of the unit, at least a unit; every index once.
TEST(Workers, SharedRangesTakeTheirOwnFrontThenTheFullestBack) {
  std::mt19937 rng(5);
  for (int parts : {2, 3, 5}) {
    for (std::int64_t unit : {1, 16}) {
      for (std::int64_t n : {0, 1, 15, 16, 17, 100, 1023}) {
        detail::SharedRanges ranges(n, parts, unit);
        std::vector<std::int64_t> front(static_cast<std::size_t>(parts)), back(front.size());
        for (int i = 0; i < parts; ++i) {
          front[static_cast<std::size_t>(i)] = n * i / parts;
          back[static_cast<std::size_t>(i)] = n * (i + 1) / parts;
        }
        const auto left = [&](std::size_t j) { return back[j] - front[j]; };
        const auto piece = [&](std::int64_t l) { return std::min(l, std::max(unit, (l / 2 + unit - 1) / unit * unit)); };
        std::vector<int> done(static_cast<std::size_t>(n), 0);
        std::vector<bool> finished(static_cast<std::size_t>(parts), false);
        while (std::find(finished.begin(), finished.end(), false) != finished.end()) {
          const auto i = static_cast<std::size_t>(rng() % static_cast<unsigned>(parts));
          std::int64_t b = -1, e = -1;
          const bool more = ranges.next(static_cast<int>(i), b, e);
          std::size_t fullest = 0;
          for (std::size_t j = 1; j < front.size(); ++j) fullest = left(j) > left(fullest) ? j : fullest;
          const std::string where = std::to_string(parts) + " parts, unit " + std::to_string(unit) + ", n " +
                                    std::to_string(n) + ", part " + std::to_string(i);
          if (left(i) > 0) {
            ASSERT_TRUE(more) << where;
            EXPECT_EQ(b, front[i]) << where;
            EXPECT_EQ(e - b, piece(left(i))) << where;
            front[i] = e;
          } else if (left(fullest) > 0) {
            ASSERT_TRUE(more) << where;
            EXPECT_EQ(e, back[fullest]) << where;
            EXPECT_EQ(e - b, piece(left(fullest))) << where;
            back[fullest] = b;
          } else {
            EXPECT_FALSE(more) << where;
            finished[i] = true;
            continue;
          }
          for (std::int64_t t = b; t < e; ++t) ++done[static_cast<std::size_t>(t)];
        }
        EXPECT_EQ(done, std::vector<int>(static_cast<std::size_t>(n), 1)) << parts << " parts, n " << n;
      }
    }
  }
}

TEST(Workers, ConcurrentCallersGetTheSingleThreadedBits) {
  const RopeParams p = yarn_rope(RopeLayout::half, 128, 128);
  const RopePlan plan(p);
  const Batch b = random_batch(p, DType::f32, 11, 0);
  Bytes want(b.q.size());
  rope_apply(plan, DType::f32, b.tokens, b.heads, b.positions.data(), tensor(b, b.q, want), {}, {Isa::scalar, 1});
  std::vector<Bytes> got(3, Bytes(b.q.size()));
  std::vector<std::thread> callers;
  for (auto& out : got) {
    callers.emplace_back([&] {
      for (int i = 0; i < 50; ++i) rope_apply(plan, DType::f32, b.tokens, b.heads, b.positions.data(), tensor(b, b.q, out), {}, {std::nullopt, 3});
    });
  }
  for (auto& t : callers) t.join();
  for (const auto& out : got) EXPECT_EQ(out, want);
}

TEST(Workers, AForkedChildStartsItsOwn) {
#ifdef __SANITIZE_THREAD__
  GTEST_SKIP() << "ThreadSanitizer cannot start threads in the child of a multi-threaded fork";
#endif
  detail::run_sharing(2, [](int) {});  // the parent's workers exist
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int sum = 0;
    // Part 0 returns when part 1 has run: not withdrawn.
    detail::run_sharing(2, [&](int i) {
      __atomic_add_fetch(&sum, i + 1, __ATOMIC_RELAXED);
      while (i == 0 && __atomic_load_n(&sum, __ATOMIC_RELAXED) != 3) std::this_thread::yield();
    });
    _exit(sum == 3 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
}

}  // namespace
}  // namespace posenc::fast
