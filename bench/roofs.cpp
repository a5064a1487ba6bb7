// The roofs each RoPE workload is measured against, on the same bytes in the same run: a
// STREAM-style copy with ordinary and with non-temporal stores (the ratio takes the faster), and
// an in-place scale (for in-place rotation); and the non-temporal copy split over 2 threads, the
// machine's own scaling, against which the rotation's 2-thread ratio is read.
#include "roofs.hpp"

#include <thread>

#include "baselines.hpp"
#include "common.hpp"

namespace posenc::bench {
namespace {

void copy(benchmark::State& state, const Workload& w, bool nontemporal) {
  Buffer<float> in(static_cast<std::size_t>(w.elements()), 1.0f), out(in.size());
  for (auto _ : state) {
    (nontemporal ? stream_copy_nontemporal : stream_copy)(in.data(), out.data(), in.size());
    benchmark::ClobberMemory();
  }
  account(state, w, 4);
}

// Halves of the copy on two threads, started and joined per call as rope_apply does.
void copy_two_threads(benchmark::State& state, const Workload& w) {
  Buffer<float> in(static_cast<std::size_t>(w.elements()), 1.0f), out(in.size());
  const std::size_t half = in.size() / 2 / 16 * 16;  // 64-byte aligned
  for (auto _ : state) {
    std::thread other(stream_copy_nontemporal, in.data() + half, out.data() + half, in.size() - half);
    stream_copy_nontemporal(in.data(), out.data(), half);
    other.join();
    benchmark::ClobberMemory();
  }
  account(state, w, 4);
}

void scale_in_place(benchmark::State& state, const Workload& w) {
  Buffer<float> x(static_cast<std::size_t>(w.elements()), 1.0f);
  for (auto _ : state) {
    stream_scale_in_place(x.data(), x.size(), 1.0f);
    benchmark::ClobberMemory();
  }
  account(state, w, 4);
}

}  // namespace

void register_roofs() {
  for (const Workload& w : workloads()) {
    add("copy/" + w.name, [w](benchmark::State& st) { copy(st, w, false); });
    add("copy_nontemporal/" + w.name, [w](benchmark::State& st) { copy(st, w, true); });
    add("scale_in_place/" + w.name, [w](benchmark::State& st) { scale_in_place(st, w); });
  }
  for (const char* name : {"Q/A", "QK/A", "Q/B", "QK/B"}) {  // those rope_cases.cpp runs on 2 threads
    const Workload w = workload(name);
    add("copy_nontemporal_2threads/" + w.name, [w](benchmark::State& st) { copy_two_threads(st, w); });
  }
}

}  // namespace posenc::bench
