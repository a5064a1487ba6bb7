#include "ratios.hpp"

#include <algorithm>
#include <cstdio>

#include "attention_cases.hpp"
#include "common.hpp"
#include "posenc/fast/fast.hpp"
#include "roofs.hpp"

namespace posenc::bench {
namespace {

// a's throughput over the best of the baselines b (bytes/s or elements/s); target 0: none.
void ratio(const Recorder& r, const std::string& what, const std::string& a, const std::vector<std::string>& b,
           double target, bool by_bytes = false) {
  const auto& m = by_bytes ? r.bytes : r.items;
  double best = 0;
  for (const auto& name : b) best = m.count(name) ? std::max(best, m.at(name)) : best;
  if (!m.count(a) || best == 0) return;
  const double v = m.at(a) / best;
  if (target > 0) {
    std::printf("  %-62s %8.2f   (target >= %.2f)\n", what.c_str(), v, target);
  } else {
    std::printf("  %-62s %8.2f\n", what.c_str(), v);
  }
}

std::string f32(const std::string& w, const std::string& mode, int threads = 1) {
  return "fused/" + w + "/f32/half/" + mode + "/" + std::to_string(threads);
}

// A paired ratio (paired.hpp) with its quartiles, target and fastest roof.
void paired(const Recorder& r, const std::string& what, const std::string& name, double target) {
  const auto it = r.paired.find("paired/" + name);
  if (it == r.paired.end()) return;
  const PairedRatio& p = it->second.ratio;
  std::printf("  %-56s %6.2f  [%.2f, %.2f]", what.c_str(), p.median, p.q1, p.q3);
  if (target > 0) std::printf("  (target >= %.2f)", target);
  if (!it->second.roof.empty()) std::printf("  %s", it->second.roof.c_str());
  std::printf("\n");
}

// Decode attention's table (attention_cases.hpp): per KV length, format and thread count, the
// call's speed over the fastest read of the same bytes and over ggml's flash attention.
void attention_ratios(const Recorder& r) {
  const auto any = r.paired.lower_bound("paired/attention/");
  if (any == r.paired.end() || any->first.rfind("paired/attention/", 0) != 0) return;
  std::string why;
  const bool with_ggml = ggml_available(why);
  std::printf("\n decode attention: 1 query token of 32 heads over 8 KV heads, head_dim 128, RoPE inside, q and O\n"
              " in f32, the cache in f16 or bf16; paired as above: the call's speed over the fastest read of\n"
              " the cache's bytes (its keys and values once; 2 threads: each read split over two threads) and\n"
              " over llama.cpp's ggml_flash_attn_ext at the same shape, KV type and thread count\n");
  if (!with_ggml) std::printf("  (ggml: unavailable: %s)\n", why.c_str());
  for (const std::int64_t keys : {4096, 32768, 131072}) {
    for (const fast::DType kv : {fast::DType::f16, fast::DType::bf16}) {
      for (const int threads : {1, 2}) {
        const std::string n = name(DecodeCase{keys, kv, threads});
        const std::string what = std::to_string(keys / 1024) + "K keys, " + std::string(fast::to_string(kv)) + ", " +
                                 std::to_string(threads) + (threads == 1 ? " thread" : " threads");
        paired(r, what + " / best read", n + "/roof", keys >= 32768 ? 0.9 : 0);
        paired(r, "   / ggml flash attention", n + "/ggml", 1.5);
      }
    }
  }
}

void ns_per_pair(const Recorder& r, const char* what, const std::string& name) {
  if (r.items.count(name)) std::printf("  %-62s %8.2f\n", what, 1e9 / r.items.at(name));
}

}  // namespace

void Recorder::ReportRuns(const std::vector<Run>& runs) {
  for (const auto& run : runs) {
    const std::string name = run.run_name.function_name;
    if (const auto ratio = run.counters.find("ratio"); ratio != run.counters.end()) {
      // The fastest roof's index is not among the counters (0 here); its name is the label.
      const PairedRatio p{ratio->second, run.counters.at("q1"), run.counters.at("q3"),
                          static_cast<int>(run.counters.at("rounds")), 0, run.counters.at("fastest_each_round")};
      paired[name] = {p, run.report_label};
    }
    if (run.run_type != Run::RT_Aggregate || run.aggregate_name != "median") continue;
    const auto it = run.counters.find("items_per_second");
    const auto bt = run.counters.find("bytes_per_second");
    if (it != run.counters.end()) items[name] = it->second;
    if (bt != run.counters.end()) bytes[name] = bt->second;
  }
  ConsoleReporter::ReportRuns(runs);
}

void print_ratios(const Recorder& r) {
  std::printf("\nposenc fast, ISA path %s, 1 thread unless stated; ratios from this one run\n",
              std::string(fast::to_string(fast::selected_isa())).c_str());
  std::printf("  (Q: one tensor of 32 heads; GQA: Q of 32 heads and K of 8, one call; QK: Q and K of\n"
              "   32 heads, one call; A: 512 tokens, B: 4096; head_dim 128, f32, half layout unless stated;\n"
              "   copy: the fastest of ordinary stores, non-temporal stores, and non-temporal stores with\n"
              "   the input prefetched 1, 2 or 8 KiB ahead or copied in 2 or 4 parts at once; in-place scale:\n"
              "   the fastest of plain, prefetched likewise, and in 2 or 4 parts at once; same bytes,\n"
              "   same run)\n");
  if (!r.paired.empty()) {
    const int rounds = r.paired.begin()->second.ratio.rounds;
    std::printf("\n targets, paired: the median over %d rounds [quartiles], each round timing a batch of\n"
                " the fused calls beside batches of each roof on the same tensors; of the roofs, the one whose\n"
                " median is the fastest, named at the end (bench/paired.hpp)\n",
                rounds);
  }
  for (const char* shape : {"A", "B"}) {
    for (const char* kind : {"Q/", "GQA/", "QK/"}) {
      const std::string w = kind + std::string(shape);
      paired(r, w + " fused out of place / best copy", w + "/out", 0.9);
      paired(r, w + "   fused / a plain streaming loop, rows given", w + "/out-vs-plain", 0);
      paired(r, w + "   new positions (every row computed)", w + "/out-moving", 0);
      paired(r, w + " fused in place / best in-place scale", w + "/in", 0.9);
      paired(r, w + "   new positions (every row computed)", w + "/in-moving", 0);
    }
    for (const char* kind : {"Q/", "QK/"}) {
      const std::string w = kind + std::string(shape);
      paired(r, w + " 2 threads / 1 thread", w + "/2threads", 1.8);
      paired(r, w + "   non-temporal copy: 2 threads / 1 (the machine's)", w + "/copy-2threads", 0);
    }
  }
  paired(r, "QK/B bf16 / f32 [elements/s]", "QK/B/bf16", 1.7);
  const std::string step = "out-step" + std::to_string(kLlama3Layers);
  // A decode step (rope_cases.hpp, Case::layers) is what decoding one token costs a model; its
  // one-call parts below it.
  paired(r, "decode step: 32 layers x (32 + 8) heads / best copy", "decode/1/" + step, 0.5);
  paired(r, "   one layer, the same position every call", "decode/1/out", 0);
  paired(r, "   one layer, a new anchor every call (worst case)", "decode/1/out-moving", 0);
  if (const auto it = r.paired.find("paired/control/copy-self"); it != r.paired.end()) {
    const PairedRatio& p = it->second.ratio;
    std::printf("  control: Q/B's non-temporal copy / %zu copies of itself (1 exactly):\n"
                "    the fastest roof's median %.2f [%.2f, %.2f]; the median of each round's fastest %.2f\n",
                copy_loops().size(), p.median, p.q1, p.q3, p.median_of_fastest_each_round);
  }
  attention_ratios(r);
  std::printf("\n ratios of medians over the benchmarks' interleaved repetitions\n");
  for (const char* shape : {"A", "B"}) {
    for (const char* kind : {"Q/", "GQA/", "QK/"}) {
      const std::string w = kind + std::string(shape);
      ratio(r, w + " fused out of place / best copy [GB/s]", f32(w, "out"), copy_roofs(w), 0, true);
      ratio(r, w + " fused in place / in-place scale [GB/s]", f32(w, "in"), scale_roofs(w), 0, true);
    }
    for (const char* kind : {"Q/", "QK/"}) {
      const std::string w = kind + std::string(shape);
      ratio(r, w + " 2 threads / 1 thread", f32(w, "out", 2), {f32(w, "out")}, 0);
      ratio(r, w + " non-temporal copy: 2 threads / 1 (the machine's scaling)", "copy_nontemporal_2threads/" + w,
            {"copy_nontemporal/" + w}, 0);
    }
  }
  ratio(r, "QK/B bf16 / f32 [elements/s]", "fused/QK/B/bf16/half/out/1", {f32("QK/B", "out")}, 0);
  ratio(r, "decode step: 32 layers x (32 + 8) heads / best copy", f32("decode/1", step), copy_roofs("decode/1"), 0, true);
  ratio(r, "decode, 1 token x (32 + 8) heads, same position / best copy", f32("decode/1", "out"), copy_roofs("decode/1"), 0, true);
  ratio(r, "decode, 1 token x (32 + 8) heads, new anchor / best copy", f32("decode/1", "out-moving"), copy_roofs("decode/1"), 0, true);
  ratio(r, "decode, 64 tokens x (32 + 8) heads, scattered / best copy", f32("decode/64", "out"), copy_roofs("decode/64"), 0, true);
  ratio(r, "decode, 64 tokens: 2 threads / 1 thread", f32("decode/64", "out", 2), {f32("decode/64", "out")}, 0);
  ratio(r, "QK/A interleaved / half layout", "fused/QK/A/f32/interleaved/out/1", {f32("QK/A", "out")}, 0.9);
  ratio(r, "QK/A fused / naive loop over a precomputed table", f32("QK/A", "out"), {"naive_table/QK/A"}, 1.0);
  ratio(r, "QK/A fused / naive scalar loop", f32("QK/A", "out"), {"naive_scalar/QK/A"}, 0);
  ratio(r, "QK/A cached (RopeCache) / fused", "cached/QK/A/f32/half/out/1", {f32("QK/A", "out")}, 0);
  for (const char* w : {"Q/A", "QK/A", "QK/B"}) {
    ratio(r, std::string(w) + " streaming / cached stores (out of place)", f32(w, "out-streaming"), {f32(w, "out-cached")}, 0);
  }
  ns_per_pair(r, "cos/sin row, ns per pair: RopePlan::table_row", "row/table_row");
  ns_per_pair(r, "cos/sin row, ns per pair: in rope_apply, consecutive positions", "row/in-call/consecutive");
  ns_per_pair(r, "cos/sin row, ns per pair: in rope_apply, scattered positions", "row/in-call/scattered");
  ratio(r, "small shape: fast / reference [elements/s]", "fast/small", {"reference/small"}, 0);
  ratio(r, "attention, small shape (64 keys, 4 heads over 2): fast / reference", "attention/fast/small",
        {"attention/reference/small"}, 0);
}

}  // namespace posenc::bench
