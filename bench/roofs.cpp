// The roofs each RoPE workload is measured against, on the same bytes in the same run: a
// STREAM-style copy with ordinary and with non-temporal stores, the latter also with its input
// prefetched (the ratio takes the fastest), and an in-place scale, also prefetched (for in-place
// rotation); and the non-temporal copy split over 2 threads, the machine's own scaling, against
// which the rotation's 2-thread ratio is read.
#include "roofs.hpp"

#include <immintrin.h>

#include <atomic>
#include <thread>

#include "baselines.hpp"
#include "common.hpp"

namespace posenc::bench {
namespace {

// copy_loop(in, out, n): one of baselines.hpp's copies.
template <class CopyLoop>
void copy(benchmark::State& state, const Workload& w, CopyLoop copy_loop) {
  Buffer<float> in(static_cast<std::size_t>(w.elements()), 1.0f), out(in.size());
  for (auto _ : state) {
    copy_loop(in.data(), out.data(), in.size());
    benchmark::ClobberMemory();
  }
  account(state, w, 4);
}

// Halves of the copy on two threads, the second kept for the whole benchmark and handed each
// call's half through an atomic it polls (the cheapest hand-over there is: the roof for
// rope_apply's kept, polling workers, fast/src/workers.cpp).
void copy_two_threads(benchmark::State& state, const Workload& w) {
  Buffer<float> in(static_cast<std::size_t>(w.elements()), 1.0f), out(in.size());
  const std::size_t half = in.size() / 2 / 16 * 16;  // 64-byte aligned
  std::atomic<int> calls{0}, done{0};  // calls handed over / finished; -1: stop
  std::thread other([&] {
    for (int seen = 0;;) {
      int now;
      while ((now = calls.load(std::memory_order_acquire)) == seen) _mm_pause();
      if (now < 0) return;
      stream_copy_nontemporal(in.data() + half, out.data() + half, in.size() - half);
      seen = now;
      done.store(now, std::memory_order_release);
    }
  });
  int n = 0;
  for (auto _ : state) {
    calls.store(++n, std::memory_order_release);
    stream_copy_nontemporal(in.data(), out.data(), half);
    while (done.load(std::memory_order_acquire) != n) _mm_pause();
    benchmark::ClobberMemory();
  }
  calls.store(-1, std::memory_order_release);
  other.join();
  account(state, w, 4);
}

// scale_loop(x, n, s): one of baselines.hpp's in-place scales.
template <class ScaleLoop>
void scale_in_place(benchmark::State& state, const Workload& w, ScaleLoop scale_loop) {
  Buffer<float> x(static_cast<std::size_t>(w.elements()), 1.0f);
  for (auto _ : state) {
    scale_loop(x.data(), x.size(), 1.0f);
    benchmark::ClobberMemory();
  }
  account(state, w, 4);
}

std::string prefetched(const char* roof, std::size_t kib, const std::string& w) {
  return std::string(roof) + "_prefetch" + std::to_string(kib) + "k/" + w;
}

}  // namespace

std::vector<std::string> copy_roofs(const std::string& w) {
  std::vector<std::string> names{"copy/" + w, "copy_nontemporal/" + w};
  for (const std::size_t kib : kRoofPrefetchKiB) names.push_back(prefetched("copy_nontemporal", kib, w));
  return names;
}

std::vector<std::string> scale_roofs(const std::string& w) {
  std::vector<std::string> names{"scale_in_place/" + w};
  for (const std::size_t kib : kRoofPrefetchKiB) names.push_back(prefetched("scale_in_place", kib, w));
  return names;
}

void register_roofs() {
  for (const Workload& w : workloads()) {
    add("copy/" + w.name, [w](benchmark::State& st) { copy(st, w, stream_copy); });
    add("copy_nontemporal/" + w.name, [w](benchmark::State& st) { copy(st, w, stream_copy_nontemporal); });
    add("scale_in_place/" + w.name, [w](benchmark::State& st) { scale_in_place(st, w, stream_scale_in_place); });
    for (const std::size_t kib : kRoofPrefetchKiB) {
      const std::size_t ahead = kib * 1024;
      add(prefetched("copy_nontemporal", kib, w.name), [w, ahead](benchmark::State& st) {
        copy(st, w, [ahead](const float* in, float* out, std::size_t n) {
          stream_copy_nontemporal_prefetched(in, out, n, ahead);
        });
      });
      add(prefetched("scale_in_place", kib, w.name), [w, ahead](benchmark::State& st) {
        scale_in_place(st, w, [ahead](float* x, std::size_t n, float s) { stream_scale_in_place_prefetched(x, n, s, ahead); });
      });
    }
  }
  for (const char* name : {"Q/A", "QK/A", "Q/B", "QK/B"}) {  // those rope_cases.cpp runs on 2 threads
    const Workload w = workload(name);
    add("copy_nontemporal_2threads/" + w.name, [w](benchmark::State& st) { copy_two_threads(st, w); });
  }
}

}  // namespace posenc::bench
