#include "paired.hpp"

#include <algorithm>
#include <chrono>
#include <string>
#include <type_traits>
#include <utility>

#include "baselines.hpp"
#include "common.hpp"
#include "roofs.hpp"
#include "rope_cases.hpp"

namespace posenc::bench {
namespace {

using Work = std::function<void()>;

double seconds(const Work& f, int batch) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < batch; ++i) f();
  benchmark::ClobberMemory();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The q-quantile of sorted v, linearly interpolated.
double quantile(const std::vector<double>& v, double q) {
  const double at = q * static_cast<double>(v.size() - 1);
  const auto i = static_cast<std::size_t>(at);
  return i + 1 < v.size() ? v[i] + (at - static_cast<double>(i)) * (v[i + 1] - v[i]) : v[i];
}

constexpr double kBatchSeconds = 2e-3;  // each timed batch at least this long (timer and call overheads)

// f32 tensors of a case as floats (Buffer<std::uint8_t> is 64-byte aligned).
float* floats(std::uint8_t* p) { return reinterpret_cast<float*>(p); }

// The case's copies (out of place, from its inputs to its outputs) or in-place scales, with their
// names, as many times as the case calls (FastCall::layers): float loops, so for f32 cases only.
struct Roofs {
  std::vector<Work> run;
  std::vector<std::string> names;
};
Roofs roofs(FastCall& f, bool in_place) {
  Roofs b;
  if (in_place) {
    for (const ScaleRoof& loop : scale_loops()) {
      b.run.push_back([&f, run = loop.run] {
        for (int l = 0; l < f.layers(); ++l) {
          for (std::size_t i = 0; i < f.tensors(); ++i) run(floats(f.in(i)), f.bytes(i) / 4);
        }
      });
      b.names.push_back(loop.prefix);
    }
  } else {
    for (const CopyRoof& loop : copy_loops()) {
      b.run.push_back([&f, run = loop.run] {
        for (int l = 0; l < f.layers(); ++l) {
          for (std::size_t i = 0; i < f.tensors(); ++i) run(floats(f.in(i)), floats(f.out(i)), f.bytes(i) / 4);
        }
      });
      b.names.push_back(loop.prefix);
    }
  }
  return b;
}

constexpr int kRounds = 31;

// A paired ratio as a benchmark's counters, its fastest roof's name as the label (ratios.cpp
// reads both).
void report(benchmark::State& state, const NamedRatio& r) {
  state.counters["ratio"] = r.ratio.median;
  state.counters["q1"] = r.ratio.q1;
  state.counters["q3"] = r.ratio.q3;
  state.counters["rounds"] = r.ratio.rounds;
  state.counters["fastest_each_round"] = r.ratio.median_of_fastest_each_round;
  state.SetLabel(r.roof);
}

// The ratio against the case's roofs, named.
NamedRatio against_roofs(FastCall& f, bool in_place) {
  const Roofs b = roofs(f, in_place);
  const PairedRatio r = paired_ratio([&f] { f.call(); }, b.run, kRounds);
  return {r, b.names[r.fastest]};
}

// The case's fused call against a plain streaming rotation loop (baselines.hpp,
// table_rope_nontemporal) over the same tensors in the same rounds, each tensor from its first
// token to its last with its rows handed to it: whether the gap to the copy is the fast path's or
// the rotation's (an f32 case out of place).
PairedRatio against_plain_loop(const Workload& w) {
  FastCall f({.w = w});
  const Tables table = tables(fast::RopePlan(llama(RopeLayout::half)), positions(w));
  return paired_ratio([&f] { f.call(); },
                      {[&] {
                        for (std::size_t i = 0; i < f.tensors(); ++i) {
                          table_rope_nontemporal(floats(f.in(i)), floats(f.out(i)), table.cos.data(), table.sin.data(),
                                                 w.tokens, w.heads.at(i), kDim);
                        }
                      }},
                      kRounds);
}

// One benchmark of one iteration: a paired ratio made by make_ratio() (objects built inside
// it), a PairedRatio or a NamedRatio.
template <class F>
void add_paired(const std::string& name, F make_ratio) {
  benchmark::RegisterBenchmark(name.c_str(), [make_ratio](benchmark::State& state) {
    for (auto _ : state) {
      if constexpr (std::is_same_v<decltype(make_ratio()), NamedRatio>) {
        report(state, make_ratio());
      } else {
        report(state, NamedRatio{make_ratio(), ""});
      }
    }
  })->Iterations(1)->Repetitions(1)->UseRealTime();
}

}  // namespace

PairedRatio paired_ratio(const Work& a, const std::vector<Work>& b, int rounds) {
  a();  // warm: first-touch page faults, the plan's tables, kept threads
  for (const Work& f : b) f();
  int batch = 1;
  while (seconds(a, batch) < kBatchSeconds) batch *= 2;
  std::vector<std::vector<double>> ratios(b.size());  // [roof][round]
  std::vector<double> fastest_each_round;
  for (int round = 0; round < rounds; ++round) {
    double ta = 0;
    std::vector<double> tb;
    if (round % 2 == 0) ta = seconds(a, batch);
    for (const Work& f : b) tb.push_back(seconds(f, batch));
    if (round % 2 == 1) ta = seconds(a, batch);
    for (std::size_t j = 0; j < b.size(); ++j) ratios[j].push_back(tb[j] / ta);
    fastest_each_round.push_back(*std::min_element(tb.begin(), tb.end()) / ta);
  }
  for (auto& r : ratios) std::sort(r.begin(), r.end());
  std::sort(fastest_each_round.begin(), fastest_each_round.end());
  std::size_t fastest = 0;
  for (std::size_t j = 1; j < b.size(); ++j) {
    if (quantile(ratios[j], 0.5) < quantile(ratios[fastest], 0.5)) fastest = j;
  }
  const std::vector<double>& r = ratios[fastest];
  return {quantile(r, 0.5), quantile(r, 0.25), quantile(r, 0.75), rounds, fastest, quantile(fastest_each_round, 0.5)};
}

void add_paired_ratio(const std::string& name, std::function<NamedRatio()> make_ratio) {
  add_paired(name, std::move(make_ratio));
}

void register_paired() {
  for (const char* shape : {"A", "B"}) {
    for (const char* kind : {"Q/", "GQA/", "QK/"}) {
      const Workload w = workload(kind + std::string(shape));
      for (const bool in_place : {false, true}) {
        for (const bool moving : {false, true}) {
          const std::string mode = std::string(in_place ? "/in" : "/out") + (moving ? "-moving" : "");
          add_paired("paired/" + w.name + mode, [w, in_place, moving] {
            FastCall f({.w = w, .in_place = in_place, .moving = moving});
            return against_roofs(f, in_place);
          });
        }
      }
      add_paired("paired/" + w.name + "/out-vs-plain", [w] { return against_plain_loop(w); });
    }
    for (const char* kind : {"Q/", "QK/"}) {
      const Workload w = workload(kind + std::string(shape));
      add_paired("paired/" + w.name + "/2threads", [w] {
        FastCall two({.w = w, .threads = 2}), one({.w = w});
        return paired_ratio([&two] { two.call(); }, {[&one] { one.call(); }}, kRounds);
      });
      add_paired("paired/" + w.name + "/copy-2threads", [w] {
        Buffer<float> in(static_cast<std::size_t>(w.elements()), 1.0f), out(in.size());
        TwoThreadCopy two(in.data(), out.data(), in.size());
        return paired_ratio([&two] { two.run(); },
                            {[&] { stream_copy_nontemporal(in.data(), out.data(), in.size()); }}, kRounds);
      });
    }
  }
  add_paired("paired/QK/B/bf16", [] {
    FastCall bf16({.w = workload("QK/B"), .d = fast::DType::bf16}), f32({.w = workload("QK/B")});
    return paired_ratio([&bf16] { bf16.call(); }, {[&f32] { f32.call(); }}, kRounds);
  });
  for (const bool moving : {false, true}) {
    add_paired(std::string("paired/decode/1/") + (moving ? "out-moving" : "out"), [moving] {
      FastCall f({.w = workload("decode/1"), .moving = moving});
      return against_roofs(f, false);
    });
  }
  add_paired("paired/decode/1/out-step" + std::to_string(kLlama3Layers), [] {
    FastCall f({.w = workload("decode/1"), .layers = kLlama3Layers});
    return against_roofs(f, false);
  });
  add_paired("paired/control/copy-self", [] {
    const Workload w = workload("Q/B");
    Buffer<float> in(static_cast<std::size_t>(w.elements()), 1.0f), out(in.size());
    const auto copy = [&] { stream_copy_nontemporal(in.data(), out.data(), in.size()); };
    return paired_ratio(copy, std::vector<Work>(copy_loops().size(), copy), kRounds);
  });
}

}  // namespace posenc::bench
