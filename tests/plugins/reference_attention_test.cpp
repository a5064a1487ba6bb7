// The reference plugin's posenc_attention called directly (plugin.h): strided and head-major
// layouts give the reference's correctly rounded O and L, a NULL lse is never written, and every
// bad layout (strides, overlapping outputs, null pointers, sizes that overflow) and every
// inconsistent parameter is refused with POSENC_INVALID_PARAMETERS before anything is written.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "posenc/abi/convert.hpp"
#include "posenc/plugin.h"
#include "posenc/reference/reference.hpp"

namespace {

using namespace posenc;

constexpr double kUnwritten = -12345.0;

// A problem of 3 queries over 5 keys, 4 query heads over 2 KV heads, head_dim 4, value_dim 3,
// with Llama-style RoPE, in f64, every tensor row-major unless a test lays it out otherwise.
struct Problem {
  AttentionParams p;
  std::int64_t nq = 3, nk = 5;
  std::vector<std::int64_t> query_positions{7, 8, 9}, key_positions{5, 6, 7, 8, 9};
  std::vector<double> q, k, v;
  posenc_rope_params rope{};
  posenc_attention_params abi{};

  Problem() {
    p.head_dim = 4;
    p.value_dim = 3;
    p.query_heads = 4;
    p.kv_heads = 2;
    RopeParams r;
    r.head_dim = 4;
    r.rotary_dim = 4;
    r.layout = RopeLayout::half;
    p.rope = r;
    p.mask = AttentionMask::causal;
    for (std::int64_t i = 0; i < nq * p.query_heads * p.head_dim; ++i) q.push_back(0.25 * static_cast<double>(i % 7) - 0.5);
    for (std::int64_t i = 0; i < nk * p.kv_heads * p.head_dim; ++i) k.push_back(0.125 * static_cast<double>(i % 5) - 0.25);
    for (std::int64_t i = 0; i < nk * p.kv_heads * p.value_dim; ++i) v.push_back(0.5 * static_cast<double>(i % 3) + 0.25);
    rope = plugin::to_abi(*p.rope);
    abi = plugin::to_abi(p, reference::attention_scale(p).f64(), &rope, nullptr);
  }

  std::vector<Rounded> expected() const {
    AttentionInputs in;
    in.queries = nq;
    in.keys = nk;
    in.query_positions = query_positions;
    in.key_positions = key_positions;
    in.q = q;
    in.k = k;
    in.v = v;
    return reference::attention(p, in).values;
  }
};

// The contiguous call, with arguments a test may change before calling.
struct Call {
  const Problem& problem;
  posenc_attention_params params;
  posenc_dtype dtype = POSENC_F64;
  std::int64_t nq, nk;
  const std::int64_t *query_positions, *key_positions;
  const void *q, *k, *v;
  std::int64_t q_ts, q_hs, k_ts, k_hs, v_ts, v_hs;
  const std::uint8_t* mask = nullptr;
  const void* table = nullptr;
  std::vector<double> o, lse;
  void* o_data;
  void* lse_data;
  std::int64_t o_ts, o_hs, l_ts, l_hs;

  explicit Call(const Problem& pr)
      : problem(pr), params(pr.abi), nq(pr.nq), nk(pr.nk), query_positions(pr.query_positions.data()),
        key_positions(pr.key_positions.data()), q(pr.q.data()), k(pr.k.data()), v(pr.v.data()), q_ts(16), q_hs(4),
        k_ts(8), k_hs(4), v_ts(6), v_hs(3), o(36, kUnwritten), lse(12, kUnwritten), o_ts(12), o_hs(3), l_ts(4), l_hs(1) {
    o_data = o.data();
    lse_data = lse.data();
  }

  posenc_status operator()() {
    return posenc_attention(&params, dtype, nq, nk, query_positions, key_positions, q, q_ts, q_hs, k, k_ts, k_hs,
                            v, v_ts, v_hs, mask, table, o_data, o_ts, o_hs, lse_data, l_ts, l_hs);
  }

  bool untouched() const {
    for (double x : o) {
      if (x != kUnwritten) return false;
    }
    for (double x : lse) {
      if (x != kUnwritten) return false;
    }
    return true;
  }
};

TEST(ReferencePluginAttention, RowMajorGivesTheReferenceOAndL) {
  const Problem pr;
  Call call(pr);
  ASSERT_EQ(call(), POSENC_OK);
  const auto expected = pr.expected();
  ASSERT_EQ(expected.size(), 48u);
  for (std::size_t j = 0; j < 36; ++j) EXPECT_EQ(call.o[j], expected[j].f64()) << "O " << j;
  for (std::size_t j = 0; j < 12; ++j) EXPECT_EQ(call.lse[j], expected[36 + j].f64()) << "L " << j;
}

// q head-major ([head][token]), O with a gap between rows and L head-major (FlashAttention's
// softmax_lse layout), lse NULL in a second call: O the same, nothing written for L.
TEST(ReferencePluginAttention, StridedLayoutsAndANullLse) {
  const Problem pr;
  const auto expected = pr.expected();
  std::vector<double> q_head_major(pr.q.size());
  for (std::size_t i = 0; i < 3; ++i) {
    for (std::size_t h = 0; h < 4; ++h) {
      for (std::size_t e = 0; e < 4; ++e) q_head_major[(h * 3 + i) * 4 + e] = pr.q[(i * 4 + h) * 4 + e];
    }
  }
  Call call(pr);
  call.q = q_head_major.data();
  call.q_ts = 4;
  call.q_hs = 12;
  call.o.assign(3 * 4 * 5, kUnwritten);
  call.o_data = call.o.data();
  call.o_ts = 20;
  call.o_hs = 5;
  call.l_ts = 1;
  call.l_hs = 3;
  ASSERT_EQ(call(), POSENC_OK);
  for (std::size_t i = 0; i < 3; ++i) {
    for (std::size_t h = 0; h < 4; ++h) {
      for (std::size_t e = 0; e < 3; ++e) {
        EXPECT_EQ(call.o[i * 20 + h * 5 + e], expected[(i * 4 + h) * 3 + e].f64());
      }
      EXPECT_EQ(call.o[i * 20 + h * 5 + 3], kUnwritten);  // the gaps stay as they were
      EXPECT_EQ(call.lse[h * 3 + i], expected[36 + i * 4 + h].f64());
    }
  }
  Call without(pr);
  without.lse_data = nullptr;
  ASSERT_EQ(without(), POSENC_OK);
  for (std::size_t j = 0; j < 36; ++j) EXPECT_EQ(without.o[j], expected[j].f64());
  for (double x : without.lse) EXPECT_EQ(x, kUnwritten);
}

// Each change makes the call invalid: refused, nothing written.
TEST(ReferencePluginAttention, RefusesBadLayoutsAndParametersWithoutWriting) {
  const Problem pr;
  const std::uint8_t mask[15] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  const double table[32] = {};
  std::vector<std::int64_t> positions_then_room(pr.key_positions);
  positions_then_room.resize(12);
  const std::vector<std::pair<const char*, std::function<void(Call&)>>> changes{
      {"q token stride 0", [](Call& c) { c.q_ts = 0; }},
      {"k head stride -4", [](Call& c) { c.k_hs = -4; }},
      {"O rows overlapping", [](Call& c) { c.o_hs = 2; }},
      {"L rows overlapping", [](Call& c) { c.l_ts = 2; }},
      {"O over q", [&](Call& c) { c.o_data = const_cast<double*>(pr.q.data()); }},
      {"L over O", [](Call& c) { c.lse_data = c.o.data() + 24; }},
      {"L over the key positions",
       [&](Call& c) {
         c.key_positions = positions_then_room.data();
         c.lse_data = positions_then_room.data();
       }},
      {"q null", [](Call& c) { c.q = nullptr; }},
      {"v null", [](Call& c) { c.v = nullptr; }},
      {"O null", [](Call& c) { c.o_data = nullptr; }},
      {"key positions null", [](Call& c) { c.key_positions = nullptr; }},
      {"a mask for a causal mask", [&](Call& c) { c.mask = mask; }},
      {"an explicit mask without its pointer", [](Call& c) { c.params.mask = POSENC_MASK_EXPLICIT; }},
      {"a table without rope_table_given", [&](Call& c) { c.table = table; }},
      {"a given table without its pointer", [](Call& c) { c.params.rope_table_given = 1; }},
      {"an undefined mask code", [](Call& c) { c.params.mask = 7; }},
      {"an undefined scale field", [](Call& c) { c.params.scale_fields = 16; }},
      {"an undefined dtype", [](Call& c) { c.dtype = static_cast<posenc_dtype>(9); }},
      {"a scale that is not its definition's rounding", [](Call& c) { c.params.scale *= 1 + 0x1p-52; }},
      {"no queries", [](Call& c) { c.nq = 0; }},
      {"negative keys", [](Call& c) { c.nk = -1; }},
      {"a stride whose extent overflows", [](Call& c) { c.v_ts = std::numeric_limits<std::int64_t>::max() / 2; }},
      {"kv_heads not dividing query_heads", [](Call& c) { c.params.kv_heads = 3; }},
      {"a rope of another head_dim", [](Call& c) { c.params.head_dim = 6; }},
  };
  for (const auto& [what, change] : changes) {
    SCOPED_TRACE(what);
    Call call(pr);
    change(call);
    EXPECT_EQ(call(), POSENC_INVALID_PARAMETERS);
    EXPECT_TRUE(call.untouched());
  }
}

}  // namespace
