// posenc fast against its baselines, in one run (the machines are shared and noisy: only ratios
// measured together mean anything). `make bench` runs it; the ratio table at the end is what the
// README quotes. Every RoPE benchmark rotates Q and K: 2 tensors of tokens x heads x 128.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <map>
#include <new>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "baselines.hpp"
#include "posenc/fast/fast.hpp"
#include "posenc/reference/reference.hpp"

namespace {

using namespace posenc;

struct Shape {
  const char* name;
  std::int64_t tokens, heads, dim;
  std::int64_t elements() const { return tokens * heads * dim; }
};
constexpr Shape kA{"A", 512, 32, 128};   // 8 MiB per f32 tensor: in L3 on most servers
constexpr Shape kB{"B", 4096, 32, 128};  // 64 MiB per f32 tensor: DRAM

RopeParams llama(RopeLayout layout) {
  RopeParams p;
  p.head_dim = p.rotary_dim = 128;
  p.base = 500000;
  p.layout = layout;
  return p;
}

std::vector<std::int64_t> positions(const Shape& s) {
  std::vector<std::int64_t> p(static_cast<std::size_t>(s.tokens));
  for (std::size_t t = 0; t < p.size(); ++t) p[t] = 100000 + static_cast<std::int64_t>(t);
  return p;
}

// Tensors 64-byte aligned, as PyTorch's CPU allocator returns them (c10/core/alignment.h,
// gAlignment = 64).
template <class T>
struct Aligned64 {
  using value_type = T;
  Aligned64() = default;
  template <class U>
  Aligned64(const Aligned64<U>&) {}
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{64})); }
  void deallocate(T* p, std::size_t) { ::operator delete(p, std::align_val_t{64}); }
  bool operator==(const Aligned64&) const = default;
};
template <class T>
using Buffer = std::vector<T, Aligned64<T>>;

// Values in [-4, 4] (activations' range: no subnormal products to slow anything down); bf16 and
// f16 inputs are the binary32 values' nearest storage values.
Buffer<std::uint8_t> random_tensor(const Shape& s, fast::DType d) {
  const auto n = static_cast<std::size_t>(s.elements());
  Buffer<std::uint8_t> v(n * fast::size_of(d));
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> value(-4, 4);
  for (std::size_t i = 0; i < n; ++i) {
    const float f = value(rng);
    if (d == fast::DType::f32) {
      std::memcpy(v.data() + 4 * i, &f, 4);
    } else if (d == fast::DType::bf16) {
      const auto h = static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(f) >> 16);
      std::memcpy(v.data() + 2 * i, &h, 2);
    } else {
      const auto h = static_cast<_Float16>(f);
      std::memcpy(v.data() + 2 * i, &h, 2);
    }
  }
  return v;
}

// Bytes read and written by one call on Q and K.
void account(benchmark::State& state, const Shape& s, std::size_t element_size) {
  state.SetItemsProcessed(state.iterations() * 2 * s.elements());
  state.SetBytesProcessed(state.iterations() * 2 * 2 * s.elements() * static_cast<std::int64_t>(element_size));
}

fast::RopeTensor tensor(const Shape& s, const void* in, void* out) {
  fast::RopeTensor t;
  t.in = in;
  t.out = out;
  t.in_token_stride = t.out_token_stride = s.heads * s.dim;
  t.in_head_stride = t.out_head_stride = s.dim;
  return t;
}

void fast_rope(benchmark::State& state, Shape s, fast::DType d, RopeLayout layout, bool in_place, bool cached,
               int threads, fast::Stores stores = fast::Stores::automatic) {
  const fast::RopePlan plan(llama(layout));
  const auto pos = positions(s);
  auto q = random_tensor(s, d), k = random_tensor(s, d);
  Buffer<std::uint8_t> qo(q.size()), ko(k.size());
  const fast::RopeTensor tq = in_place ? tensor(s, q.data(), q.data()) : tensor(s, q.data(), qo.data());
  const fast::RopeTensor tk = in_place ? tensor(s, k.data(), k.data()) : tensor(s, k.data(), ko.data());
  const fast::Isa isa = fast::selected_isa();
  const fast::Options options{isa, threads, stores};
  std::unique_ptr<fast::RopeCache> cache;
  if (cached) cache = std::make_unique<fast::RopeCache>(plan, pos.front(), s.tokens, isa);
  for (auto _ : state) {
    if (cached) {
      fast::rope_apply(*cache, d, s.tokens, s.heads, pos.data(), tq, tk, options);
    } else {
      fast::rope_apply(plan, d, s.tokens, s.heads, pos.data(), tq, tk, options);
    }
    benchmark::ClobberMemory();
  }
  account(state, s, fast::size_of(d));
}

void copy(benchmark::State& state, Shape s, bool nontemporal) {
  Buffer<float> in(static_cast<std::size_t>(2 * s.elements()), 1.0f), out(in.size());
  for (auto _ : state) {
    (nontemporal ? bench::stream_copy_nontemporal : bench::stream_copy)(in.data(), out.data(), in.size());
    benchmark::ClobberMemory();
  }
  account(state, s, 4);
}

void scale_in_place(benchmark::State& state, Shape s) {
  Buffer<float> x(static_cast<std::size_t>(2 * s.elements()), 1.0f);
  for (auto _ : state) {
    bench::stream_scale_in_place(x.data(), x.size(), 1.0f);
    benchmark::ClobberMemory();
  }
  account(state, s, 4);
}

void naive_scalar(benchmark::State& state, Shape s) {
  const auto pos = positions(s);
  Buffer<float> q(static_cast<std::size_t>(s.elements())), k, qo(q.size()), ko(q.size());
  std::memcpy(q.data(), random_tensor(s, fast::DType::f32).data(), q.size() * 4);
  k = q;
  for (auto _ : state) {
    bench::naive_rope(q.data(), qo.data(), pos.data(), s.tokens, s.heads, s.dim, 500000.0f);
    bench::naive_rope(k.data(), ko.data(), pos.data(), s.tokens, s.heads, s.dim, 500000.0f);
    benchmark::ClobberMemory();
  }
  account(state, s, 4);
}

void naive_table(benchmark::State& state, Shape s) {
  const fast::RopePlan plan(llama(RopeLayout::half));
  const auto pos = positions(s);
  std::vector<float> cos_table(static_cast<std::size_t>(s.tokens * s.dim / 2)), sin_table(cos_table.size());
  const auto half = static_cast<std::size_t>(s.dim / 2);
  for (std::size_t t = 0; t < static_cast<std::size_t>(s.tokens); ++t) {
    plan.table_row({&pos[t], 1}, std::span(cos_table).subspan(t * half, half), std::span(sin_table).subspan(t * half, half),
                   fast::Isa::scalar);
  }
  Buffer<float> q(static_cast<std::size_t>(s.elements())), k, qo(q.size()), ko(q.size());
  std::memcpy(q.data(), random_tensor(s, fast::DType::f32).data(), q.size() * 4);
  k = q;
  for (auto _ : state) {
    bench::table_rope(q.data(), qo.data(), cos_table.data(), sin_table.data(), s.tokens, s.heads, s.dim);
    bench::table_rope(k.data(), ko.data(), cos_table.data(), sin_table.data(), s.tokens, s.heads, s.dim);
    benchmark::ClobberMemory();
  }
  account(state, s, 4);
}

// The shape users compare fast and reference on: 4 tokens x 2 heads x 128, Q only.
constexpr Shape kSmall{"small", 4, 2, 128};

void reference_small(benchmark::State& state) {
  const RopeParams p = llama(RopeLayout::half);
  std::vector<double> x(128, 0.5);
  for (auto _ : state) {
    for (std::int64_t t = 0; t < kSmall.tokens * kSmall.heads; ++t) {
      const std::int64_t position = 100000 + t;
      benchmark::DoNotOptimize(reference::rope_rotate(p, {&position, 1}, x));
    }
  }
  state.SetItemsProcessed(state.iterations() * kSmall.elements());
}

void fast_small(benchmark::State& state) {
  const fast::RopePlan plan(llama(RopeLayout::half));
  const auto pos = positions(kSmall);
  std::vector<float> q(static_cast<std::size_t>(kSmall.elements()), 0.5f), qo(q.size());
  for (auto _ : state) {
    fast::rope_apply(plan, fast::DType::f32, kSmall.tokens, kSmall.heads, pos.data(), tensor(kSmall, q.data(), qo.data()), {});
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * kSmall.elements());
}

// Keeps each benchmark's median over the repetitions, for the ratio table.
class Recorder : public benchmark::ConsoleReporter {
 public:
  std::map<std::string, double> items, bytes;
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& r : runs) {
      if (r.run_type != Run::RT_Aggregate || r.aggregate_name != "median") continue;
      std::string name = r.run_name.function_name;
      const auto it = r.counters.find("items_per_second");
      const auto bt = r.counters.find("bytes_per_second");
      if (it != r.counters.end()) items[name] = it->second;
      if (bt != r.counters.end()) bytes[name] = bt->second;
    }
    ConsoleReporter::ReportRuns(runs);
  }
};

// a's throughput over the best of the baselines b (bytes/s or elements/s).
void ratio(const Recorder& r, const char* what, const std::string& a, const std::vector<std::string>& b,
           double target, bool by_bytes = false) {
  const auto& m = by_bytes ? r.bytes : r.items;
  double best = 0;
  for (const auto& name : b) best = m.count(name) ? std::max(best, m.at(name)) : best;
  if (!m.count(a) || best == 0) return;
  const double v = m.at(a) / best;
  if (target > 0) {
    std::printf("  %-62s %8.2f   (target >= %.2f)\n", what, v, target);
  } else {
    std::printf("  %-62s %8.2f\n", what, v);
  }
}

}  // namespace

int main(int argc, char** argv) {
  using fast::DType;
  const auto I = RopeLayout::interleaved, H = RopeLayout::half;
  auto add = [](const std::string& name, auto f) {
    benchmark::RegisterBenchmark(name.c_str(), f)->UseRealTime()->MinTime(0.1)->Repetitions(11)->ReportAggregatesOnly();
  };
  for (Shape s : {kA, kB}) {
    const std::string n = s.name;
    add("copy/" + n, [s](benchmark::State& st) { copy(st, s, false); });
    add("copy_nontemporal/" + n, [s](benchmark::State& st) { copy(st, s, true); });
    add("scale_in_place/" + n, [s](benchmark::State& st) { scale_in_place(st, s); });
    add("naive_table/" + n, [s](benchmark::State& st) { naive_table(st, s); });
    add("fused/" + n + "/f32/interleaved/out/1", [s, I](benchmark::State& st) { fast_rope(st, s, DType::f32, I, false, false, 1); });
    add("fused/" + n + "/f32/half/out/1", [s, H](benchmark::State& st) { fast_rope(st, s, DType::f32, H, false, false, 1); });
    add("fused/" + n + "/f32/half/out-cached/1", [s, H](benchmark::State& st) { fast_rope(st, s, DType::f32, H, false, false, 1, fast::Stores::cached); });
    add("fused/" + n + "/f32/half/out-streaming/1", [s, H](benchmark::State& st) { fast_rope(st, s, DType::f32, H, false, false, 1, fast::Stores::streaming); });
    add("fused/" + n + "/f32/half/in/1", [s, H](benchmark::State& st) { fast_rope(st, s, DType::f32, H, true, false, 1); });
    add("fused/" + n + "/bf16/half/out/1", [s, H](benchmark::State& st) { fast_rope(st, s, DType::bf16, H, false, false, 1); });
    add("cached/" + n + "/f32/half/out/1", [s, H](benchmark::State& st) { fast_rope(st, s, DType::f32, H, false, true, 1); });
    add("fused/" + n + "/f32/half/out/2", [s, H](benchmark::State& st) { fast_rope(st, s, DType::f32, H, false, false, 2); });
  }
  add("naive_scalar/A", [](benchmark::State& st) { naive_scalar(st, kA); });
  add("reference/small", reference_small);
  add("fast/small", fast_small);
  // The machines are shared: repetitions of all benchmarks interleaved in random order, so that
  // a slow spell hits every benchmark alike, and ratios of medians.
  std::vector<char*> args(argv, argv + argc);
  std::string interleave = "--benchmark_enable_random_interleaving=true";
  args.insert(args.begin() + 1, interleave.data());
  int n_args = static_cast<int>(args.size());
  benchmark::Initialize(&n_args, args.data());
  Recorder r;
  benchmark::RunSpecifiedBenchmarks(&r);
  std::printf("\nposenc fast, ISA path %s, 1 thread unless stated; ratios from this one run\n",
              std::string(fast::to_string(fast::selected_isa())).c_str());
  const auto copies = [](const std::string& n) { return std::vector<std::string>{"copy/" + n, "copy_nontemporal/" + n}; };
  ratio(r, "A fused (f32, half) / best copy of the same bytes [GB/s]", "fused/A/f32/half/out/1", copies("A"), 0.9, true);
  ratio(r, "A fused (f32, half) / naive loop over a precomputed table", "fused/A/f32/half/out/1", {"naive_table/A"}, 1.0);
  ratio(r, "A fused / naive scalar loop", "fused/A/f32/half/out/1", {"naive_scalar/A"}, 0);
  ratio(r, "B fused out-of-place / best copy [GB/s]", "fused/B/f32/half/out/1", copies("B"), 0.9, true);
  ratio(r, "B fused in-place / in-place scale [GB/s]", "fused/B/f32/half/in/1", {"scale_in_place/B"}, 0.9, true);
  ratio(r, "B bf16 / f32 [elements/s]", "fused/B/bf16/half/out/1", {"fused/B/f32/half/out/1"}, 1.7);
  ratio(r, "A 2 threads / 1 thread", "fused/A/f32/half/out/2", {"fused/A/f32/half/out/1"}, 1.7);
  ratio(r, "A interleaved / half layout", "fused/A/f32/interleaved/out/1", {"fused/A/f32/half/out/1"}, 0.9);
  ratio(r, "A cached / fused", "cached/A/f32/half/out/1", {"fused/A/f32/half/out/1"}, 0);
  ratio(r, "A streaming / cached stores (out of place)", "fused/A/f32/half/out-streaming/1", {"fused/A/f32/half/out-cached/1"}, 0);
  ratio(r, "B streaming / cached stores (out of place)", "fused/B/f32/half/out-streaming/1", {"fused/B/f32/half/out-cached/1"}, 0);
  ratio(r, "small shape: fast / reference [elements/s]", "fast/small", {"reference/small"}, 0);
  benchmark::Shutdown();
  return 0;
}
