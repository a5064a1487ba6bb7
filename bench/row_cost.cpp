// The per-token cos/sin row on its own, in ns per pair: through RopePlan::table_row (one row per
// call), and inside rope_apply on one head of 128 (the rotation of that head included), for
// consecutive and for scattered positions, new ones every call.
#include "row_cost.hpp"

#include "common.hpp"

namespace posenc::bench {
namespace {

void table_row(benchmark::State& state) {
  const fast::RopePlan plan(llama(RopeLayout::half));
  std::vector<float> c(kDim / 2), s(kDim / 2);
  std::int64_t position = 100000;
  for (auto _ : state) {
    plan.table_row({&position, 1}, c, s, fast::selected_isa());
    ++position;
    benchmark::DoNotOptimize(c.data());
    benchmark::DoNotOptimize(s.data());
  }
  state.SetItemsProcessed(state.iterations() * plan.pairs());
}

void in_call(benchmark::State& state, bool scattered) {
  const fast::RopePlan plan(llama(RopeLayout::half));
  const Workload w{"row", 512, {1}, scattered};
  const auto first = positions(w);
  auto pos = first;
  Buffer<std::uint8_t> x = random_tensor(w.elements(), fast::DType::f32);
  fast::RopeTensor t;
  t.in = t.out = x.data();
  t.in_token_stride = t.out_token_stride = t.in_head_stride = t.out_head_stride = kDim;
  std::int64_t offset = 0;
  for (auto _ : state) {
    fast::rope_apply(plan, fast::DType::f32, w.tokens, 1, pos.data(), t, {}, {fast::selected_isa()});
    benchmark::ClobberMemory();
    // New positions every call, so that no row is kept from the last one (rope.cpp, KeptRows).
    offset = (offset + w.tokens) % (std::int64_t{1} << 24);
    for (std::size_t i = 0; i < pos.size(); ++i) pos[i] = first[i] + offset;
  }
  state.SetItemsProcessed(state.iterations() * w.tokens * plan.pairs());
}

}  // namespace

void register_row_cost() {
  add("row/table_row", table_row);
  add("row/in-call/consecutive", [](benchmark::State& st) { in_call(st, false); });
  add("row/in-call/scattered", [](benchmark::State& st) { in_call(st, true); });
}

}  // namespace posenc::bench
