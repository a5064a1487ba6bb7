#include "paired.hpp"

#include <algorithm>
#include <chrono>

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

// The case's copies (out of place, from its inputs to its outputs) or in-place scales: float
// loops, so for f32 cases only.
std::vector<Work> roofs(FastCall& f, bool in_place) {
  std::vector<Work> b;
  if (in_place) {
    for (const ScaleRoof& loop : scale_loops()) {
      b.push_back([&f, run = loop.run] {
        for (std::size_t i = 0; i < f.tensors(); ++i) run(floats(f.in(i)), f.bytes(i) / 4);
      });
    }
  } else {
    for (const CopyRoof& loop : copy_loops()) {
      b.push_back([&f, run = loop.run] {
        for (std::size_t i = 0; i < f.tensors(); ++i) run(floats(f.in(i)), floats(f.out(i)), f.bytes(i) / 4);
      });
    }
  }
  return b;
}

constexpr int kRounds = 31;

void report(benchmark::State& state, const PairedRatio& r) {
  state.counters["ratio"] = r.median;
  state.counters["q1"] = r.q1;
  state.counters["q3"] = r.q3;
  state.counters["rounds"] = r.rounds;
}

// One benchmark of one iteration: a paired ratio made by make_ratio() (objects built inside it).
template <class F>
void add_paired(const std::string& name, F make_ratio) {
  benchmark::RegisterBenchmark(name.c_str(), [make_ratio](benchmark::State& state) {
    for (auto _ : state) report(state, make_ratio());
  })->Iterations(1)->Repetitions(1)->UseRealTime();
}

}  // namespace

PairedRatio paired_ratio(const Work& a, const std::vector<Work>& b, int rounds) {
  a();  // warm: first-touch page faults, the plan's tables, kept threads
  for (const Work& f : b) f();
  int batch = 1;
  while (seconds(a, batch) < kBatchSeconds) batch *= 2;
  std::vector<double> ratios;
  for (int round = 0; round < rounds; ++round) {
    double ta = 0, tb = 1e300;
    if (round % 2 == 0) ta = seconds(a, batch);
    for (const Work& f : b) tb = std::min(tb, seconds(f, batch));
    if (round % 2 == 1) ta = seconds(a, batch);
    ratios.push_back(tb / ta);
  }
  std::sort(ratios.begin(), ratios.end());
  return {quantile(ratios, 0.5), quantile(ratios, 0.25), quantile(ratios, 0.75), rounds};
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
            return paired_ratio([&f] { f.call(); }, roofs(f, in_place), kRounds);
          });
        }
      }
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
      return paired_ratio([&f] { f.call(); }, roofs(f, false), kRounds);
    });
  }
}

}  // namespace posenc::bench
