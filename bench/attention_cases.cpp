// Decode attention: posenc fast against the machine's read of the same bytes, against llama.cpp's
// CPU flash attention at the same shapes, and against the reference on a small shape.
#include "attention_cases.hpp"

#include <dlfcn.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <vector>

#include "common.hpp"
#include "ggml_attention.h"
#include "paired.hpp"
#include "posenc/fast/attention.hpp"
#include "posenc/reference/reference.hpp"
#include "roofs.hpp"

namespace posenc::bench {
namespace {

constexpr std::int64_t kQueryHeads = 32, kKvHeads = 8;  // Llama 3 8B (its config.json)
constexpr std::int64_t kCacheKeys[] = {4096, 32768, 131072};
constexpr int kRoofRounds = 31;
// llama.cpp's call takes up to about a second at 128K keys: fewer rounds keep the bench's length.
constexpr int kGgmlRounds = 11;

AttentionParams llama_attention() {
  AttentionParams p;
  p.query_heads = kQueryHeads;
  p.kv_heads = kKvHeads;
  p.head_dim = p.value_dim = kDim;
  p.mask = AttentionMask::causal;
  p.rope = llama(RopeLayout::half);
  return p;
}

// n values in [-1, 1) of storage d (a splitmix64 stream: hundreds of millions of values in a
// second, where std::mt19937 takes several).
Buffer<std::uint8_t> values(std::int64_t n, fast::DType d, std::uint64_t seed) {
  Buffer<std::uint8_t> out(static_cast<std::size_t>(n) * fast::size_of(d));
  std::uint64_t x = seed;
  for (std::int64_t i = 0; i < n; ++i) {
    std::uint64_t z = (x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    const float f = static_cast<float>(static_cast<double>(z >> 40) * 0x1p-23 - 1.0);
    if (d == fast::DType::f32) {
      std::memcpy(out.data() + 4 * i, &f, 4);
    } else if (d == fast::DType::bf16) {
      std::uint32_t b;
      std::memcpy(&b, &f, 4);
      const auto h = static_cast<std::uint16_t>(b >> 16);
      std::memcpy(out.data() + 2 * i, &h, 2);
    } else {
      const auto h = static_cast<_Float16>(f);
      std::memcpy(out.data() + 2 * i, &h, 2);
    }
  }
  return out;
}

// A decode step's buffers: the cache full but for its last slot, which each call writes (the new
// token's key and value), then reads with the others.
struct Decode {
  explicit Decode(const DecodeCase& c)
      : c_(c),
        plan_(llama_attention()),
        k_(values(c.keys * kKvHeads * kDim, c.kv, 1)),
        v_(values(c.keys * kKvHeads * kDim, c.kv, 2)),
        q_(values(kQueryHeads * kDim, fast::DType::f32, 3)),
        new_k_(values(kKvHeads * kDim, c.kv, 4)),
        new_v_(values(kKvHeads * kDim, c.kv, 5)),
        out_(static_cast<std::size_t>(kQueryHeads * kDim)),
        position_(c.keys - 1) {
    cache_.dtype = c.kv;
    cache_.k = k_.data();
    cache_.v = v_.data();
    cache_.capacity = c.keys;
    cache_.k_token_stride = cache_.v_token_stride = kKvHeads * kDim;
    cache_.k_head_stride = cache_.v_head_stride = kDim;
    tokens_.dtype = fast::DType::f32;
    tokens_.count = 1;
    tokens_.positions = &position_;
    tokens_.q = q_.data();
    tokens_.q_token_stride = kQueryHeads * kDim;
    tokens_.q_head_stride = kDim;
    tokens_.k = new_k_.data();
    tokens_.v = new_v_.data();
    tokens_.k_token_stride = tokens_.v_token_stride = kKvHeads * kDim;
    tokens_.k_head_stride = tokens_.v_head_stride = kDim;
    tokens_.out = out_.data();
    tokens_.out_token_stride = kQueryHeads * kDim;
    tokens_.out_head_stride = kDim;
    options_.threads = c.threads;
  }

  void call() { fast::attention_decode(plan_, cache_, c_.keys - 1, tokens_, options_); }
  std::size_t bytes() const { return k_.size(); }  // of K, as many of V

  DecodeCase c_;
  fast::AttentionPlan plan_;
  Buffer<std::uint8_t> k_, v_, q_, new_k_, new_v_;
  Buffer<float> out_;
  std::int64_t position_;
  fast::KvCache cache_;
  fast::AttentionTokens tokens_;
  fast::Options options_;
};

// The module bench/ggml/build.sh built, loaded once (RTLD_LOCAL: ggml's symbols stay in it).
struct Ggml {
  posenc_ggml_attention_new_fn make = nullptr;
  posenc_ggml_attention_run_fn run = nullptr;
  posenc_ggml_attention_free_fn free = nullptr;
  std::string why;  // empty when loaded
};

const Ggml& ggml() {
  static const Ggml g = [] {
    Ggml out;
    const std::string dir = POSENC_BENCH_GGML_DIR;
    if (std::ifstream reason(dir + "/unavailable"); reason) {
      std::getline(reason, out.why);
      return out;
    }
    void* module = dlopen((dir + "/posenc_ggml_attention.so").c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!module) {
      const char* e = dlerror();
      out.why = e ? e : "dlopen failed";
      return out;
    }
    out.make = reinterpret_cast<posenc_ggml_attention_new_fn>(dlsym(module, "posenc_ggml_attention_new"));
    out.run = reinterpret_cast<posenc_ggml_attention_run_fn>(dlsym(module, "posenc_ggml_attention_run"));
    out.free = reinterpret_cast<posenc_ggml_attention_free_fn>(dlsym(module, "posenc_ggml_attention_free"));
    if (!out.make || !out.run || !out.free) out.why = "posenc_ggml_attention.so lacks its entry points";
    return out;
  }();
  return g;
}

// ggml_flash_attn_ext over the decode's own cache (all its slots) and query.
class GgmlDecode {
 public:
  explicit GgmlDecode(Decode& d) {
    char error[256] = "";
    a_ = ggml().make(d.c_.kv == fast::DType::f16 ? 0 : 1, d.c_.keys, kQueryHeads, kKvHeads, kDim, d.c_.threads,
                     d.k_.data(), d.v_.data(), reinterpret_cast<const float*>(d.q_.data()), out_.data(), error);
    if (!a_) throw std::runtime_error(std::string("ggml refused the decode: ") + error);
  }
  ~GgmlDecode() { ggml().free(a_); }
  GgmlDecode(const GgmlDecode&) = delete;
  GgmlDecode& operator=(const GgmlDecode&) = delete;
  void run() {
    if (ggml().run(a_) != 0) throw std::runtime_error("ggml_graph_compute failed");
  }

 private:
  std::vector<float> out_ = std::vector<float>(static_cast<std::size_t>(kQueryHeads * kDim));
  posenc_ggml_attention* a_ = nullptr;
};

// The call against the reads of its cache's bytes: on one thread each read loop over K then V;
// on two, each loop split over two threads (TwoThreadRead).
NamedRatio against_reads(const DecodeCase& c) {
  Decode d(c);
  std::vector<std::function<void()>> reads;
  std::vector<std::string> names;
  std::vector<std::unique_ptr<TwoThreadRead>> two;
  std::uint32_t sink = 0;
  for (const ReadRoof& loop : read_loops()) {
    if (c.threads == 1) {
      reads.push_back([&d, &sink, run = loop.run] { sink += run(d.k_.data(), d.bytes()) + run(d.v_.data(), d.bytes()); });
    } else {
      two.push_back(std::make_unique<TwoThreadRead>(
          std::vector<TwoThreadRead::Array>{{d.k_.data(), d.bytes()}, {d.v_.data(), d.bytes()}}, loop.run));
      reads.push_back([t = two.back().get()] { t->run(); });
    }
    names.push_back(loop.prefix + (c.threads == 1 ? "" : "_2threads"));
  }
  const PairedRatio r = paired_ratio([&d] { d.call(); }, reads, kRoofRounds);
  benchmark::DoNotOptimize(sink);
  return {r, names[r.fastest]};
}

NamedRatio against_ggml(const DecodeCase& c) {
  Decode d(c);
  GgmlDecode g(d);
  return {paired_ratio([&d] { d.call(); }, {[&g] { g.run(); }}, kGgmlRounds), "ggml_flash_attn_ext"};
}

// The small shape users compare fast and reference on: one query of 4 heads over 2 KV heads, 64
// keys, head_dim 128, f32, RoPE inside.
AttentionParams small_attention() {
  AttentionParams p = llama_attention();
  p.query_heads = 4;
  p.kv_heads = 2;
  return p;
}
constexpr std::int64_t kSmallKeys = 64;

void reference_small(benchmark::State& state) {
  const AttentionParams p = small_attention();
  std::vector<std::int64_t> key_positions(kSmallKeys), query_position{kSmallKeys - 1};
  for (std::int64_t j = 0; j < kSmallKeys; ++j) key_positions[static_cast<std::size_t>(j)] = j;
  std::vector<double> q(static_cast<std::size_t>(p.query_heads * kDim)), k(static_cast<std::size_t>(kSmallKeys * p.kv_heads * kDim)),
      v(k.size());
  for (std::size_t i = 0; i < q.size(); ++i) q[i] = std::ldexp(static_cast<double>(i % 17) - 8, -4);
  for (std::size_t i = 0; i < k.size(); ++i) k[i] = std::ldexp(static_cast<double>(i % 13) - 6, -4);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = std::ldexp(static_cast<double>(i % 11) - 5, -3);
  AttentionInputs in;
  in.queries = 1;
  in.keys = kSmallKeys;
  in.query_positions = query_position;
  in.key_positions = key_positions;
  in.q = q;
  in.k = k;
  in.v = v;
  for (auto _ : state) benchmark::DoNotOptimize(reference::attention(p, in));
  state.SetItemsProcessed(state.iterations() * kSmallKeys * p.query_heads);
}

void fast_small(benchmark::State& state) {
  const fast::AttentionPlan plan(small_attention());
  const AttentionParams& p = plan.params();
  Buffer<float> k(static_cast<std::size_t>(kSmallKeys * p.kv_heads * kDim)), v(k.size()), q(static_cast<std::size_t>(p.query_heads * kDim)),
      out(q.size());
  for (std::size_t i = 0; i < q.size(); ++i) q[i] = std::ldexp(static_cast<float>(i % 17) - 8, -4);
  for (std::size_t i = 0; i < k.size(); ++i) k[i] = std::ldexp(static_cast<float>(i % 13) - 6, -4);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = std::ldexp(static_cast<float>(i % 11) - 5, -3);
  const Buffer<float> new_k(k.end() - p.kv_heads * kDim, k.end()), new_v(v.end() - p.kv_heads * kDim, v.end());
  const std::int64_t position = kSmallKeys - 1;
  fast::KvCache cache;
  cache.k = k.data();
  cache.v = v.data();
  cache.capacity = kSmallKeys;
  cache.k_token_stride = cache.v_token_stride = p.kv_heads * kDim;
  cache.k_head_stride = cache.v_head_stride = kDim;
  fast::AttentionTokens t;
  t.count = 1;
  t.positions = &position;
  t.q = q.data();
  t.q_token_stride = p.query_heads * kDim;
  t.q_head_stride = kDim;
  t.k = new_k.data();
  t.v = new_v.data();
  t.k_token_stride = t.v_token_stride = p.kv_heads * kDim;
  t.k_head_stride = t.v_head_stride = kDim;
  t.out = out.data();
  t.out_token_stride = p.query_heads * kDim;
  t.out_head_stride = kDim;
  for (auto _ : state) {
    fast::attention_decode(plan, cache, kSmallKeys - 1, t);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * kSmallKeys * p.query_heads);
}

}  // namespace

std::string name(const DecodeCase& c) {
  return "attention/decode/" + std::to_string(c.keys / 1024) + "K/" + std::string(fast::to_string(c.kv)) + "/" +
         std::to_string(c.threads);
}

bool ggml_available(std::string& why) {
  why = ggml().why;
  return why.empty();
}

void register_attention_cases() {
  std::string why;
  const bool with_ggml = ggml_available(why);
  for (const std::int64_t keys : kCacheKeys) {
    for (const fast::DType kv : {fast::DType::f16, fast::DType::bf16}) {
      for (const int threads : {1, 2}) {
        const DecodeCase c{keys, kv, threads};
        add_paired_ratio("paired/" + name(c) + "/roof", [c] { return against_reads(c); });
        if (with_ggml) add_paired_ratio("paired/" + name(c) + "/ggml", [c] { return against_ggml(c); });
      }
    }
  }
  add("attention/reference/small", reference_small);
  add("attention/fast/small", fast_small);
}

}  // namespace posenc::bench
