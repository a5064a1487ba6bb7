// posenc fast's decode attention beyond what the suite checks: every ISA path and every thread
// count give the same bits (outputs and the cache the call appends to), the outputs are those of a
// plain long double computation up to binary32's rounding (so that a key, head or mask the kernel
// gets wrong shows), the cache holds rope_apply's rotated keys, and bad calls are refused with the
// parameter named before anything is written. The accuracy itself is the suite's job
// (conform_fast_paths, on the attention vectors).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "elements.hpp"
#include "posenc/errors.hpp"
#include "posenc/fast/attention.hpp"
#include "posenc/fast/fast.hpp"
#include "test_setup.hpp"

namespace posenc::fast {
namespace {

using test_setup::Bytes;
using test_setup::yarn_rope;

// One call's setting: the attention, the formats, the cache's fill and the new tokens.
struct Setting {
  std::string name;
  AttentionParams params;
  DType cache = DType::f32, tokens = DType::f32;
  std::int64_t length = 0, count = 1;
  std::int64_t first_position = 0;  // of slot 0; slots and new tokens follow one by one
  std::int64_t pad = 0;             // elements between head rows (strides honoured)
};

AttentionParams attention(std::int64_t H, std::int64_t G, std::int64_t d, std::int64_t dv, AttentionMask mask) {
  AttentionParams p;
  p.query_heads = H;
  p.kv_heads = G;
  p.head_dim = d;
  p.value_dim = dv;
  p.mask = mask;
  return p;
}

std::vector<Setting> settings() {
  std::vector<Setting> out;
  {
    Setting s{"llama-gqa-4", attention(8, 2, 128, 128, AttentionMask::causal), DType::bf16, DType::f32, 2500, 1, 100};
    s.params.rope = yarn_rope(RopeLayout::half, 128, 128);
    out.push_back(s);
  }
  {
    Setting s{"mha-interleaved-block", attention(3, 3, 64, 64, AttentionMask::causal), DType::f16, DType::bf16, 700, 5,
              (std::int64_t{1} << 31) - 800, 8};
    s.params.rope = yarn_rope(RopeLayout::interleaved, 64, 64);
    out.push_back(s);
  }
  {
    Setting s{"group3-partial-none", attention(6, 2, 80, 40, AttentionMask::none), DType::f32, DType::f16, 33, 16, 7, 3};
    s.params.rope = yarn_rope(RopeLayout::half, 80, 32);
    out.push_back(s);
  }
  {
    Setting s{"alibi-causal", attention(12, 12, 24, 24, AttentionMask::causal), DType::bf16, DType::f32, 1100, 3,
              std::int64_t{1} << 40};
    s.params.alibi = AlibiParams{12, AlibiMode::causal};
    out.push_back(s);
  }
  {
    Setting s{"alibi-symmetric-none", attention(4, 2, 16, 16, AttentionMask::none), DType::f16, DType::f32, 20, 4, 3};
    s.params.alibi = AlibiParams{4, AlibiMode::symmetric};
    out.push_back(s);
  }
  {
    Setting s{"group8-values-narrower", attention(16, 2, 192, 64, AttentionMask::causal), DType::f16, DType::f16, 1500, 2, 0, 16};
    s.params.rope = yarn_rope(RopeLayout::interleaved, 192, 64);
    out.push_back(s);
  }
  {
    Setting s{"group2-empty-cache", attention(4, 2, 32, 32, AttentionMask::causal), DType::f32, DType::f32, 0, 1, 5};
    s.params.rope = yarn_rope(RopeLayout::half, 32, 32);
    out.push_back(s);
  }
  {
    Setting s{"mrope", attention(2, 1, 128, 128, AttentionMask::causal), DType::bf16, DType::bf16, 50, 2, 10};
    s.params.rope = yarn_rope(RopeLayout::half, 128, 128);
    s.params.rope->scaling = {};
    s.params.rope->mrope_section = {16, 24, 24};
    out.push_back(s);
  }
  {
    Setting s{"unrotated-mha", attention(2, 2, 8, 20, AttentionMask::causal), DType::f32, DType::f32, 40, 1, 0};
    s.params.scale = 0.375;
    out.push_back(s);
  }
  return out;
}

// A call's buffers: the cache (earlier slots filled, the rest zero), the new tokens and the
// outputs, from a seed; run() makes the call on copies and returns what it wrote.
class Problem {
 public:
  Problem(const Setting& s, std::uint32_t seed) : s_(s), plan_(s.params) {
    const AttentionParams& p = s.params;
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> value(-2, 2);
    capacity_ = s.length + s.count + 3;
    kd_ = p.head_dim + s.pad;
    vd_ = p.value_dim + s.pad;
    const auto fill = [&](Bytes& b, DType d, std::int64_t n) {
      b.assign(static_cast<std::size_t>(n) * size_of(d), 0);
      for (std::int64_t i = 0; i < n; ++i) detail::store(d, b.data(), i, value(rng));
    };
    fill(cache_k_, s.cache, capacity_ * p.kv_heads * kd_);
    fill(cache_v_, s.cache, capacity_ * p.kv_heads * vd_);
    // Slots past the cache's length are the call's to write: zero before it.
    std::fill(cache_k_.begin() + static_cast<std::ptrdiff_t>(s.length * p.kv_heads * kd_ * size_of(s.cache)), cache_k_.end(), 0);
    std::fill(cache_v_.begin() + static_cast<std::ptrdiff_t>(s.length * p.kv_heads * vd_ * size_of(s.cache)), cache_v_.end(), 0);
    fill(q_, s.tokens, s.count * p.query_heads * kd_);
    fill(k_, s.cache, s.count * p.kv_heads * kd_);
    fill(v_, s.cache, s.count * p.kv_heads * vd_);
    for (std::int64_t j = 0; j < capacity_; ++j) cache_positions_.push_back(j < s.length ? s.first_position + j : -1);
    const std::int64_t axes = p.position_axes();
    for (std::int64_t t = 0; t < s.count; ++t) {
      for (std::int64_t a = 0; a < axes; ++a) positions_.push_back(s.first_position + s.length + t + 3 * a);
    }
  }

  struct Result {
    Bytes out, lse, cache_k, cache_v;
    std::vector<std::int64_t> cache_positions;
  };

  Result run(const Options& options) const {
    Result r{Bytes(static_cast<std::size_t>(s_.count * s_.params.query_heads * vd_) * size_of(s_.tokens), 0xAB),
             Bytes(static_cast<std::size_t>(s_.count * s_.params.query_heads) * size_of(s_.tokens), 0xCD), cache_k_, cache_v_,
             cache_positions_};
    attention_decode(plan_, cache(r), s_.length, tokens(r), options);
    return r;
  }

  KvCache cache(Result& r) const {
    KvCache c;
    c.dtype = s_.cache;
    c.k = r.cache_k.data();
    c.v = r.cache_v.data();
    c.capacity = capacity_;
    c.k_token_stride = s_.params.kv_heads * kd_;
    c.k_head_stride = kd_;
    c.v_token_stride = s_.params.kv_heads * vd_;
    c.v_head_stride = vd_;
    c.positions = r.cache_positions.data();
    return c;
  }

  AttentionTokens tokens(Result& r) const {
    AttentionTokens t;
    t.dtype = s_.tokens;
    t.count = s_.count;
    t.positions = positions_.data();
    t.q = q_.data();
    t.q_token_stride = s_.params.query_heads * kd_;
    t.q_head_stride = kd_;
    t.k = k_.data();
    t.k_token_stride = s_.params.kv_heads * kd_;
    t.k_head_stride = kd_;
    t.v = v_.data();
    t.v_token_stride = s_.params.kv_heads * vd_;
    t.v_head_stride = vd_;
    t.out = r.out.data();
    t.out_token_stride = s_.params.query_heads * vd_;
    t.out_head_stride = vd_;
    t.lse = r.lse.data();
    return t;
  }

  // O and L by a plain computation in long double from what the call left in the cache (its keys
  // rotated by rope_apply, whose accuracy fast_test.cpp and the suite check) and the queries
  // rotated by the plan's binary32 cos/sin rows.
  void reference(const Result& r, std::vector<long double>& o, std::vector<long double>& lse) const {
    const AttentionParams& p = s_.params;
    const std::int64_t H = p.query_heads, d = p.head_dim, dv = p.value_dim, axes = p.position_axes();
    const long double scale = plan_.scale();
    o.assign(static_cast<std::size_t>(s_.count * H * dv), 0);
    lse.assign(static_cast<std::size_t>(s_.count * H), 0);
    for (std::int64_t t = 0; t < s_.count; ++t) {
      for (std::int64_t h = 0; h < H; ++h) {
        std::vector<long double> q(static_cast<std::size_t>(d));
        for (std::int64_t e = 0; e < d; ++e) q[e] = detail::load(s_.tokens, q_.data(), (t * H + h) * kd_ + e);
        if (const RopePlan* rope = plan_.rope()) {
          const RopeParams& rp = rope->params();
          std::vector<float> c(static_cast<std::size_t>(rope->pairs())), sn(c.size());
          rope->table_row(std::span(positions_).subspan(static_cast<std::size_t>(t * axes), static_cast<std::size_t>(axes)), c, sn,
                          Isa::scalar);
          const std::vector<long double> x = q;
          for (std::int64_t i = 0; i < rope->pairs(); ++i) {
            const std::int64_t a = rp.pair_first(i), b = rp.pair_second(i);
            q[a] = x[a] * c[i] - x[b] * sn[i];
            q[b] = x[b] * c[i] + x[a] * sn[i];
          }
        }
        const std::int64_t g = p.kv_head(h);
        const std::int64_t seen = p.mask == AttentionMask::causal ? s_.length + t + 1 : s_.length + s_.count;
        std::vector<long double> logits;
        for (std::int64_t j = 0; j < seen; ++j) {
          long double dot = 0;
          for (std::int64_t e = 0; e < d; ++e) dot += q[e] * detail::load(s_.cache, r.cache_k.data(), (j * p.kv_heads + g) * kd_ + e);
          long double bias = 0;
          if (p.alibi) {
            long double distance = static_cast<long double>(positions_[t * axes]) - r.cache_positions[j];
            if (p.alibi->mode == AlibiMode::symmetric) distance = std::fabs(distance);
            bias = plan_.negated_slopes()[h] * distance;
          }
          logits.push_back(scale * dot + bias);
        }
        const long double top = *std::max_element(logits.begin(), logits.end());
        long double sum = 0;
        for (std::int64_t j = 0; j < seen; ++j) {
          const long double w = std::exp(logits[j] - top);
          sum += w;
          for (std::int64_t e = 0; e < dv; ++e) {
            o[(t * H + h) * dv + e] += w * detail::load(s_.cache, r.cache_v.data(), (j * p.kv_heads + g) * vd_ + e);
          }
        }
        for (std::int64_t e = 0; e < dv; ++e) o[(t * H + h) * dv + e] /= sum;
        lse[t * H + h] = top + std::log(sum);
      }
    }
  }

  const Setting& setting() const { return s_; }
  const AttentionPlan& plan() const { return plan_; }
  std::int64_t value_row() const { return vd_; }
  std::int64_t key_row() const { return kd_; }
  const Bytes& new_keys() const { return k_; }
  const Bytes& new_values() const { return v_; }
  const std::vector<std::int64_t>& positions() const { return positions_; }
  std::int64_t capacity() const { return capacity_; }

 private:
  Setting s_;
  AttentionPlan plan_;
  std::int64_t capacity_ = 0, kd_ = 0, vd_ = 0;
  Bytes cache_k_, cache_v_, q_, k_, v_;
  std::vector<std::int64_t> cache_positions_, positions_;
};

Options on(Isa isa, int threads) {
  Options o;
  o.isa = isa;
  o.threads = threads;
  return o;
}

// The tests that compare paths run once per ISA path; a path this CPU lacks is skipped (and
// reported as skipped), not compared scalar against scalar and counted as passed.
class AttentionPath : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    const std::vector<Isa> here = supported_isas();
    if (std::find(here.begin(), here.end(), GetParam()) == here.end()) {
      GTEST_SKIP() << "this CPU does not support the " << to_string(GetParam()) << " path";
    }
  }
};

INSTANTIATE_TEST_SUITE_P(Isa, AttentionPath, ::testing::Values(Isa::scalar, Isa::avx2, Isa::avx512),
                         [](const ::testing::TestParamInfo<Isa>& p) { return std::string(to_string(p.param)); });

TEST_P(AttentionPath, EveryThreadCountGivesTheScalarPathsBits) {
  for (const Setting& s : settings()) {
    const Problem problem(s, 7);
    const Problem::Result scalar = problem.run(on(Isa::scalar, 1));
    for (int threads : {1, 2, 3, 5}) {
      const Problem::Result r = problem.run(on(GetParam(), threads));
      EXPECT_EQ(r.out, scalar.out) << s.name << ", " << threads << " threads";
      EXPECT_EQ(r.lse, scalar.lse) << s.name << ", " << threads << " threads";
      EXPECT_EQ(r.cache_k, scalar.cache_k) << s.name << ", " << threads << " threads";
      EXPECT_EQ(r.cache_v, scalar.cache_v) << s.name << ", " << threads << " threads";
      EXPECT_EQ(r.cache_positions, scalar.cache_positions) << s.name << ", " << threads << " threads";
    }
  }
}

// A kernel that reads a wrong key, head or value row, or masks one key too many or too few, moves
// O by about |v| / n and L by about 1 / n (n keys up to ~2,500 here); binary32 arithmetic errs by
// about sqrt(n) 2^-24 relative. The tolerance lies between: 2^-14 of the largest |v| (2) for O,
// of max(1, |L|) for L; outputs in bf16 or f16 add their own rounding, 2^-8 or 2^-11 relative.
TEST_P(AttentionPath, OutputsAreAPlainComputationsUpToRounding) {
  for (const Setting& s : settings()) {
    const Problem problem(s, 11);
    const Problem::Result r = problem.run(on(GetParam(), 2));
    std::vector<long double> o, lse;
    problem.reference(r, o, lse);
    const long double storage = s.tokens == DType::f32 ? 0 : s.tokens == DType::bf16 ? 0x1p-8L : 0x1p-11L;
    const std::int64_t H = s.params.query_heads, dv = s.params.value_dim;
    long double worst = 0;
    for (std::int64_t t = 0; t < s.count; ++t) {
      for (std::int64_t h = 0; h < H; ++h) {
        for (std::int64_t e = 0; e < dv; ++e) {
          const long double want = o[(t * H + h) * dv + e];
          const long double got = detail::load(s.tokens, r.out.data(), (t * H + h) * problem.value_row() + e);
          const long double error = std::fabs(got - want);
          worst = std::max(worst, error);
          ASSERT_LE(error, 0x1p-14L * 2 + storage * std::fabs(want)) << s.name << " O[" << t << "][" << h << "][" << e << "]";
        }
        const long double want = lse[t * H + h], got = detail::load(s.tokens, r.lse.data(), t * H + h);
        ASSERT_LE(std::fabs(got - want), (0x1p-14L + storage) * std::max(1.0L, std::fabs(want)))
            << s.name << " L[" << t << "][" << h << "]";
      }
    }
    std::cout << s.name << ": largest error of O " << static_cast<double>(worst) << "\n";
  }
}

TEST(Attention, TheCacheHoldsRopeApplysKeysAndTheValues) {
  for (const Setting& s : settings()) {
    const Problem problem(s, 3);
    const Problem::Result r = problem.run({});
    const AttentionParams& p = s.params;
    const std::size_t size = size_of(s.cache);
    const std::int64_t G = p.kv_heads, kd = problem.key_row(), vd = problem.value_row();
    Bytes keys(static_cast<std::size_t>(s.count * G * kd) * size, 0);
    if (const RopePlan* rope = problem.plan().rope()) {
      RopeTensor k;
      k.in = problem.new_keys().data();
      k.out = keys.data();
      k.in_token_stride = k.out_token_stride = G * kd;
      k.in_head_stride = k.out_head_stride = kd;
      rope_apply(*rope, s.cache, s.count, G, problem.positions().data(), k, {});
    } else {
      keys = problem.new_keys();
    }
    for (std::int64_t t = 0; t < s.count; ++t) {
      for (std::int64_t g = 0; g < G; ++g) {
        const std::size_t slot = static_cast<std::size_t>(((s.length + t) * G + g) * kd) * size;
        const std::size_t row = static_cast<std::size_t>((t * G + g) * kd) * size;
        EXPECT_EQ(std::memcmp(r.cache_k.data() + slot, keys.data() + row, static_cast<std::size_t>(p.head_dim) * size), 0)
            << s.name << " key " << t << " head " << g;
        const std::size_t vslot = static_cast<std::size_t>(((s.length + t) * G + g) * vd) * size;
        const std::size_t vrow = static_cast<std::size_t>((t * G + g) * vd) * size;
        EXPECT_EQ(std::memcmp(r.cache_v.data() + vslot, problem.new_values().data() + vrow,
                              static_cast<std::size_t>(p.value_dim) * size),
                  0)
            << s.name << " value " << t << " head " << g;
      }
      EXPECT_EQ(r.cache_positions[static_cast<std::size_t>(s.length + t)],
                problem.positions()[static_cast<std::size_t>(t * p.position_axes())]);
    }
  }
}

// The new keys and values may be the cache's own slots (the projection wrote them there): rotated
// and kept in place, with the bits of a call that copies them.
TEST(Attention, KeysAndValuesInTheCachesSlotsGiveACopysBits) {
  const Setting s = settings()[1];
  const Problem problem(s, 5);
  const Problem::Result copied = problem.run({});
  // The cache before the call, with the new keys (unrotated) and values already in their slots:
  // a run's buffers, whose earlier slots the call left as they were, the new ones rewritten.
  Problem::Result state = problem.run({});
  const AttentionParams& p = s.params;
  const std::size_t size = size_of(s.cache);
  const std::int64_t G = p.kv_heads, kd = problem.key_row(), vd = problem.value_row();
  const std::size_t k_slots = static_cast<std::size_t>(s.length * G * kd) * size;
  const std::size_t v_slots = static_cast<std::size_t>(s.length * G * vd) * size;
  for (std::int64_t r = 0; r < s.count * G; ++r) {  // the rows, not the padding between them
    std::memcpy(state.cache_k.data() + k_slots + static_cast<std::size_t>(r * kd) * size,
                problem.new_keys().data() + static_cast<std::size_t>(r * kd) * size, static_cast<std::size_t>(p.head_dim) * size);
    std::memcpy(state.cache_v.data() + v_slots + static_cast<std::size_t>(r * vd) * size,
                problem.new_values().data() + static_cast<std::size_t>(r * vd) * size, static_cast<std::size_t>(p.value_dim) * size);
  }
  KvCache cache = problem.cache(state);
  AttentionTokens tokens = problem.tokens(state);
  tokens.k = state.cache_k.data() + k_slots;
  tokens.v = state.cache_v.data() + v_slots;
  attention_decode(problem.plan(), cache, s.length, tokens, {});
  EXPECT_EQ(state.out, copied.out);
  EXPECT_EQ(state.lse, copied.lse);
  EXPECT_EQ(state.cache_k, copied.cache_k);
  EXPECT_EQ(state.cache_v, copied.cache_v);
}

// Calls from several threads at once, each with workers, give each one's single-threaded bits.
TEST(Attention, ConcurrentCallersGetTheSingleThreadedBits) {
  const Setting s = settings()[0];
  const Problem problem(s, 13);
  const Problem::Result alone = problem.run(on(Isa::scalar, 1));
  std::vector<Problem::Result> results(3);
  std::vector<std::thread> callers;
  for (std::size_t i = 0; i < results.size(); ++i) {
    callers.emplace_back([&, i] { results[i] = problem.run(on(best_isa(), 2)); });
  }
  for (auto& c : callers) c.join();
  for (const auto& r : results) {
    EXPECT_EQ(r.out, alone.out);
    EXPECT_EQ(r.lse, alone.lse);
  }
}

// A bad argument is refused, naming it, before the cache or the outputs change.
TEST(Attention, BadCallsAreRefusedWithTheParameterNamedBeforeAnyWrite) {
  Setting s = settings()[3];  // ALiBi: cache positions are checked too
  s.length = 40;
  const Problem problem(s, 17);
  const auto refused = [&](const char* parameter, const std::function<void(KvCache&, std::int64_t&, AttentionTokens&, Options&)>& spoil) {
    Problem::Result r = problem.run({});  // a good call's buffers
    KvCache cache = problem.cache(r);
    AttentionTokens tokens = problem.tokens(r);
    std::int64_t length = s.length;
    Options options;
    spoil(cache, length, tokens, options);
    const Problem::Result untouched = r;
    try {
      attention_decode(problem.plan(), cache, length, tokens, options);
      ADD_FAILURE() << parameter << ": accepted";
    } catch (const InvalidParameter& e) {
      EXPECT_EQ(e.parameter(), parameter) << e.what();
    }
    EXPECT_EQ(r.out, untouched.out) << parameter;
    EXPECT_EQ(r.lse, untouched.lse) << parameter;
    EXPECT_EQ(r.cache_k, untouched.cache_k) << parameter;
    EXPECT_EQ(r.cache_v, untouched.cache_v) << parameter;
    EXPECT_EQ(r.cache_positions, untouched.cache_positions) << parameter;
  };
  refused("tokens.count", [](KvCache&, std::int64_t&, AttentionTokens& t, Options&) { t.count = 0; });
  refused("tokens.count", [](KvCache&, std::int64_t&, AttentionTokens& t, Options&) { t.count = kMaxAttentionTokens + 1; });
  refused("cache_length", [](KvCache&, std::int64_t& length, AttentionTokens&, Options&) { length = -1; });
  refused("cache.capacity", [](KvCache& c, std::int64_t&, AttentionTokens&, Options&) { c.capacity = 42; });
  refused("cache.capacity", [](KvCache& c, std::int64_t& length, AttentionTokens&, Options&) { length = c.capacity - 2; });
  refused("cache.dtype", [](KvCache& c, std::int64_t&, AttentionTokens&, Options&) { c.dtype = static_cast<DType>(7); });
  refused("tokens.dtype", [](KvCache&, std::int64_t&, AttentionTokens& t, Options&) { t.dtype = static_cast<DType>(-1); });
  refused("threads", [](KvCache&, std::int64_t&, AttentionTokens&, Options& o) { o.threads = 0; });
  refused("cache.k", [](KvCache& c, std::int64_t&, AttentionTokens&, Options&) { c.k = nullptr; });
  refused("tokens.out", [](KvCache&, std::int64_t&, AttentionTokens& t, Options&) { t.out = nullptr; });
  refused("tokens.positions", [](KvCache&, std::int64_t&, AttentionTokens& t, Options&) { t.positions = nullptr; });
  refused("cache.positions", [](KvCache& c, std::int64_t&, AttentionTokens&, Options&) { c.positions = nullptr; });
  // Strides (posenc/strided_view.hpp names a stride below 1 alone, overlapping rows by both
  // strides, and overlapping tensors by both names).
  refused("cache.k strides", [](KvCache& c, std::int64_t&, AttentionTokens&, Options&) { c.k_head_stride = 3; });
  refused("cache.v_token_stride", [](KvCache& c, std::int64_t&, AttentionTokens&, Options&) { c.v_token_stride = 0; });
  refused("tokens.q_head_stride", [](KvCache&, std::int64_t&, AttentionTokens& t, Options&) { t.q_head_stride = -1; });
  refused("tokens.out strides", [](KvCache&, std::int64_t&, AttentionTokens& t, Options&) { t.out_head_stride = 1; });
  // Overlaps: the output on the cache, a new key on the written slots of V, the cache's K on V.
  refused("cache.k and tokens.out", [](KvCache& c, std::int64_t&, AttentionTokens& t, Options&) { t.out = c.k; });
  refused("cache.v and tokens.k", [](KvCache& c, std::int64_t&, AttentionTokens& t, Options&) { t.k = c.v; });
  refused("cache.k and cache.v", [](KvCache& c, std::int64_t&, AttentionTokens&, Options&) { c.v = static_cast<char*>(c.k) + 2; });
  // Positions: ALiBi's range, and causal ALiBi's order (no key a query sees after it).
  refused("tokens.positions[0]", [](KvCache&, std::int64_t&, AttentionTokens& t, Options&) {
    static const std::int64_t negative[] = {-1, 0, 1};
    t.positions = negative;
  });
  refused("cache.positions[39]", [](KvCache& c, std::int64_t&, AttentionTokens&, Options&) { c.positions[39] = std::int64_t{1} << 50; });
  refused("cache.positions[5]", [](KvCache& c, std::int64_t&, AttentionTokens&, Options&) { c.positions[5] = -3; });
  refused("tokens.positions[0]", [](KvCache&, std::int64_t&, AttentionTokens& t, Options&) {
    static std::int64_t later[3];
    std::copy(t.positions, t.positions + 3, later);
    std::swap(later[0], later[2]);  // token 1 sees token 0, now after it
    t.positions = later;
  });
}

TEST(Attention, RopePositionsBeyondTheAccurateRangeAreRefused) {
  const Setting s = settings()[0];
  const Problem problem(s, 19);
  Problem::Result r = problem.run({});
  KvCache cache = problem.cache(r);
  AttentionTokens tokens = problem.tokens(r);
  const std::int64_t far[] = {kMaxPosition + 1};
  tokens.positions = far;
  const Problem::Result untouched = r;
  try {
    attention_decode(problem.plan(), cache, s.length, tokens, {});
    ADD_FAILURE() << "accepted";
  } catch (const InvalidParameter& e) {
    EXPECT_EQ(e.parameter(), "tokens.positions") << e.what();
  }
  EXPECT_EQ(r.cache_k, untouched.cache_k);
  EXPECT_EQ(r.out, untouched.out);
}

TEST(Attention, PlansRefuseWhatTheDecodeKernelDoesNotOffer) {
  const auto refused = [](const AttentionParams& p, const char* parameter) {
    try {
      const AttentionPlan plan(p);
      ADD_FAILURE() << parameter << ": accepted";
    } catch (const InvalidParameter& e) {
      EXPECT_EQ(e.parameter(), parameter) << e.what();
    }
  };
  AttentionParams p = attention(4, 2, 32, 32, AttentionMask::explicit_);
  refused(p, "attention.mask");
  p.mask = AttentionMask::causal;
  p.rope = yarn_rope(RopeLayout::half, 32, 32);
  p.rope_table_given = true;
  refused(p, "attention.rope_table_given");
  refused(attention(4, 3, 32, 32, AttentionMask::causal), "attention.kv_heads");
  AttentionParams tiny = attention(4, 2, 32, 32, AttentionMask::causal);
  tiny.scale = 1e-300;
  refused(tiny, "attention.scale");
}

}  // namespace
}  // namespace posenc::fast
