// posenc fast's rope_apply on the workloads engines run (common.hpp).
#include "rope_cases.hpp"

#include "common.hpp"

namespace posenc::bench {
namespace {

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

// One plan per layout for every case, as an engine keeps one per model: a thread's rows are kept
// by plan (rope.cpp, KeptRows), and a copy of a plan is the same plan to them. With a plan per
// case, two cases timed in alternation (bf16 against f32, 2 threads against 1: paired.cpp) would
// each find the other's rows, not their own, and compute every row of every call.
const fast::RopePlan& plan_of(RopeLayout layout) {
  static const fast::RopePlan half(llama(RopeLayout::half)), interleaved(llama(RopeLayout::interleaved));
  return layout == RopeLayout::half ? half : interleaved;
}

}  // namespace

std::string name(const Case& c) {
  const std::string mode = c.in_place                            ? "in"
                           : c.stores == fast::Stores::cached    ? "out-cached"
                           : c.stores == fast::Stores::streaming ? "out-streaming"
                           : c.moving                            ? "out-moving"
                           : c.layers > 1                        ? "out-step" + std::to_string(c.layers)
                                                                 : std::string("out");
  return std::string(c.cached ? "cached/" : "fused/") + c.w.name + "/" + std::string(fast::to_string(c.d)) + "/" +
         (c.layout == RopeLayout::half ? "half" : "interleaved") + "/" + mode + "/" + std::to_string(c.threads);
}

struct FastCall::State {
  Case c;
  fast::RopePlan plan;
  std::vector<std::int64_t> pos;
  std::vector<Tensor> x;
  fast::Options options;
  std::unique_ptr<fast::RopeCache> cache;
};

FastCall::FastCall(const Case& c)
    : s_(new State{c, plan_of(c.layout), positions(c.w), {}, {fast::selected_isa(), c.threads, c.stores}, {}}) {
  for (std::int64_t h : c.w.heads) {
    Buffer<std::uint8_t> in = random_tensor(c.w.tokens * h * kDim, c.d);
    s_->x.push_back({h, in, Buffer<std::uint8_t>(in.size())});
  }
  if (c.cached) s_->cache = std::make_unique<fast::RopeCache>(s_->plan, s_->pos.front(), c.w.tokens, *s_->options.isa);
}

FastCall::~FastCall() = default;

void FastCall::call() {
  State& s = *s_;
  const fast::RopeTensor q = s.x[0].view(s.c.in_place), k = s.x.size() == 2 ? s.x[1].view(s.c.in_place) : fast::RopeTensor{};
  for (int layer = 0; layer < s.c.layers; ++layer) {
    if (s.cache) {
      fast::rope_apply(*s.cache, s.c.d, s.c.w.tokens, s.x[0].heads, s.pos.data(), q, k, s.options);
    } else {
      fast::rope_apply(s.plan, s.c.d, s.c.w.tokens, s.x[0].heads, s.pos.data(), q, k, s.options);
    }
  }
  const std::int64_t on = s.c.moving ? 16 : s.c.layers > 1 ? 1 : 0;
  for (auto& p : s.pos) p = p < 1'000'000 ? p + on : p % 16;
}

int FastCall::layers() const { return s_->c.layers; }

std::uint8_t* FastCall::in(std::size_t i) { return s_->x.at(i).in.data(); }
std::uint8_t* FastCall::out(std::size_t i) { return s_->c.in_place ? in(i) : s_->x.at(i).out.data(); }
std::size_t FastCall::tensors() const { return s_->x.size(); }
std::size_t FastCall::bytes(std::size_t i) const { return s_->x.at(i).in.size(); }

namespace {

void fast_rope(benchmark::State& state, const Case& c) {
  FastCall f(c);
  for (auto _ : state) {
    f.call();
    benchmark::ClobberMemory();
  }
  account(state, c.w, fast::size_of(c.d), c.layers);
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
  // The store modes forced: whether the automatic threshold (fast/src/rope.cpp, beyond_core_cache)
  // gives each shape its faster store.
  for (const char* n : {"Q/A", "QK/A", "QK/B"}) {
    add_case({.w = workload(n), .stores = fast::Stores::cached});
    add_case({.w = workload(n), .stores = fast::Stores::streaming});
  }
  add_case({.w = workload("QK/B"), .d = fast::DType::bf16});
  add_case({.w = workload("QK/A"), .layout = RopeLayout::interleaved});
  add_case({.w = workload("QK/A"), .cached = true});
  add_case({.w = workload("decode/1")});
  add_case({.w = workload("decode/1"), .moving = true});
  add_case({.w = workload("decode/1"), .layers = kLlama3Layers});
  add_case({.w = workload("decode/64")});
  add_case({.w = workload("decode/64"), .threads = 2});
}

}  // namespace posenc::bench
