// posenc fast's neighbours: naive loops an engine might start from, and the reference.
#include "naive_cases.hpp"

#include <cstring>

#include "baselines.hpp"
#include "common.hpp"
#include "posenc/reference/reference.hpp"

namespace posenc::bench {
namespace {

// Q and K of shape A, f32, each its own buffer.
struct QK {
  Workload w = workload("QK/A");
  std::int64_t tokens = w.tokens, heads = w.heads[0];
  Buffer<float> q, k, qo, ko;
  QK() : q(static_cast<std::size_t>(tokens * heads * kDim)), qo(q.size()), ko(q.size()) {
    std::memcpy(q.data(), random_tensor(tokens * heads * kDim, fast::DType::f32).data(), q.size() * 4);
    k = q;
  }
};

void naive_scalar(benchmark::State& state) {
  QK x;
  const auto pos = positions(x.w);
  for (auto _ : state) {
    naive_rope(x.q.data(), x.qo.data(), pos.data(), x.tokens, x.heads, kDim, 500000.0f);
    naive_rope(x.k.data(), x.ko.data(), pos.data(), x.tokens, x.heads, kDim, 500000.0f);
    benchmark::ClobberMemory();
  }
  account(state, x.w, 4);
}

void naive_table(benchmark::State& state) {
  QK x;
  const fast::RopePlan plan(llama(RopeLayout::half));
  const Tables table = tables(plan, positions(x.w));
  for (auto _ : state) {
    table_rope(x.q.data(), x.qo.data(), table.cos.data(), table.sin.data(), x.tokens, x.heads, kDim);
    table_rope(x.k.data(), x.ko.data(), table.cos.data(), table.sin.data(), x.tokens, x.heads, kDim);
    benchmark::ClobberMemory();
  }
  account(state, x.w, 4);
}

// The shape users compare fast and reference on: 4 tokens x 2 heads x 128, Q only.
constexpr std::int64_t kSmallTokens = 4, kSmallHeads = 2;

void reference_small(benchmark::State& state) {
  const RopeParams p = llama(RopeLayout::half);
  std::vector<double> x(kDim, 0.5);
  for (auto _ : state) {
    for (std::int64_t t = 0; t < kSmallTokens * kSmallHeads; ++t) {
      const std::int64_t position = 100000 + t;
      benchmark::DoNotOptimize(reference::rope_rotate(p, {&position, 1}, x));
    }
  }
  state.SetItemsProcessed(state.iterations() * kSmallTokens * kSmallHeads * kDim);
}

void fast_small(benchmark::State& state) {
  const fast::RopePlan plan(llama(RopeLayout::half));
  const std::int64_t pos[kSmallTokens] = {100000, 100001, 100002, 100003};
  std::vector<float> q(static_cast<std::size_t>(kSmallTokens * kSmallHeads * kDim), 0.5f), qo(q.size());
  fast::RopeTensor t;
  t.in = q.data();
  t.out = qo.data();
  t.in_token_stride = t.out_token_stride = kSmallHeads * kDim;
  t.in_head_stride = t.out_head_stride = kDim;
  for (auto _ : state) {
    fast::rope_apply(plan, fast::DType::f32, kSmallTokens, kSmallHeads, pos, t, {});
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * kSmallTokens * kSmallHeads * kDim);
}

}  // namespace

void register_naive_cases() {
  add("naive_scalar/QK/A", naive_scalar);
  add("naive_table/QK/A", naive_table);
  add("reference/small", reference_small);
  add("fast/small", fast_small);
}

}  // namespace posenc::bench
