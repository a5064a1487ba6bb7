// posenc fast's rope_apply on the workloads engines run (common.hpp).
#include "rope_cases.hpp"

#include <cstring>
#include <memory>

#include "common.hpp"

namespace posenc::bench {
namespace {

struct Case {
  Workload w;
  fast::DType d = fast::DType::f32;
  RopeLayout layout = RopeLayout::half;
  bool in_place = false, cached = false;
  int threads = 1;
  fast::Stores stores = fast::Stores::automatic;
  // Every call 16 positions on (a new anchor, rope.cpp): a decode step's first layer. Otherwise
  // the same positions every call, as its later layers see them.
  bool moving = false;
};

// One tensor of the workload: tokens x heads x 128, contiguous.
struct Tensor {
  std::int64_t heads;
  Buffer<std::uint8_t> in, out;
  fast::RopeTensor view(bool in_place) {
    fast::RopeTensor t;
    t.in = in.data();
    t.out = in_place ? in.data() : out.data();
    t.in_token_stride = t.out_token_stride = heads * kDim;
    t.in_head_stride = t.out_head_stride = kDim;
    t.heads = heads;
    return t;
  }
};

void fast_rope(benchmark::State& state, const Case& c) {
  const fast::RopePlan plan(llama(c.layout));
  auto pos = positions(c.w);
  std::vector<Tensor> x;
  for (std::int64_t h : c.w.heads) {
    Buffer<std::uint8_t> in = random_tensor(c.w.tokens * h * kDim, c.d);
    x.push_back({h, in, Buffer<std::uint8_t>(in.size())});
  }
  const fast::Options options{fast::selected_isa(), c.threads, c.stores};
  std::unique_ptr<fast::RopeCache> cache;
  if (c.cached) cache = std::make_unique<fast::RopeCache>(plan, pos.front(), c.w.tokens, *options.isa);
  const auto call = [&](std::int64_t heads, const fast::RopeTensor& q, const fast::RopeTensor& k) {
    if (cache) return fast::rope_apply(*cache, c.d, c.w.tokens, heads, pos.data(), q, k, options);
    fast::rope_apply(plan, c.d, c.w.tokens, heads, pos.data(), q, k, options);
  };
  for (auto _ : state) {
    call(x[0].heads, x[0].view(c.in_place), x.size() == 2 ? x[1].view(c.in_place) : fast::RopeTensor{});
    if (c.moving) {
      for (auto& p : pos) p = p < 1'000'000 ? p + 16 : p % 16;
    }
    benchmark::ClobberMemory();
  }
  account(state, c.w, fast::size_of(c.d));
}

std::string name(const Case& c) {
  const char* mode = c.in_place                                ? "in"
                     : c.stores == fast::Stores::cached        ? "out-cached"
                     : c.stores == fast::Stores::streaming     ? "out-streaming"
                     : c.moving                                ? "out-moving"
                                                               : "out";
  return std::string(c.cached ? "cached/" : "fused/") + c.w.name + "/" + std::string(fast::to_string(c.d)) + "/" +
         (c.layout == RopeLayout::half ? "half" : "interleaved") + "/" + mode + "/" + std::to_string(c.threads);
}

void add_case(const Case& c) {
  add(name(c), [c](benchmark::State& st) { fast_rope(st, c); });
}

}  // namespace

void register_rope_cases() {
  for (const char* shape : {"A", "B"}) {
    for (const char* kind : {"Q/", "GQA/", "QK/"}) {
      const Workload w = workload(kind + std::string(shape));
      add_case({.w = w});
      add_case({.w = w, .in_place = true});
      if (std::string(kind) != "GQA/") add_case({.w = w, .threads = 2});
    }
  }
  // The store modes forced: the lead of issue 19 (a single tensor of shape A, under the
  // automatic threshold, took ordinary stores and ran at ~half a copy's speed).
  for (const char* n : {"Q/A", "QK/A", "QK/B"}) {
    add_case({.w = workload(n), .stores = fast::Stores::cached});
    add_case({.w = workload(n), .stores = fast::Stores::streaming});
  }
  add_case({.w = workload("QK/B"), .d = fast::DType::bf16});
  add_case({.w = workload("QK/A"), .layout = RopeLayout::interleaved});
  add_case({.w = workload("QK/A"), .cached = true});
  add_case({.w = workload("decode/1")});
  add_case({.w = workload("decode/1"), .moving = true});
  add_case({.w = workload("decode/64")});
  add_case({.w = workload("decode/64"), .threads = 2});
}

}  // namespace posenc::bench
