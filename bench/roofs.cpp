// The roofs each RoPE workload is measured against, on the same bytes in the same run: a
// STREAM-style copy with ordinary and with non-temporal stores, the latter also with its input
// prefetched (the ratio takes the fastest), and an in-place scale, also prefetched (for in-place
// rotation); and the non-temporal copy split over 2 threads, the machine's own scaling, against
// which the rotation's 2-thread ratio is read. For decode attention, reads of its cache's bytes
// (read_loops, TwoThreadRead: attention_cases.cpp registers them).
#include "roofs.hpp"

#include <immintrin.h>

#include <chrono>
#include <utility>

#include "baselines.hpp"
#include "common.hpp"

namespace posenc::bench {
namespace {

// copy_loop(in, out, n): one of copy_loops().
template <class CopyLoop>
void copy(benchmark::State& state, const Workload& w, CopyLoop copy_loop) {
  Buffer<float> in(static_cast<std::size_t>(w.elements()), 1.0f), out(in.size());
  for (auto _ : state) {
    copy_loop(in.data(), out.data(), in.size());
    benchmark::ClobberMemory();
  }
  account(state, w, 4);
}

void copy_two_threads(benchmark::State& state, const Workload& w) {
  Buffer<float> in(static_cast<std::size_t>(w.elements()), 1.0f), out(in.size());
  TwoThreadCopy copy(in.data(), out.data(), in.size());
  for (auto _ : state) {
    copy.run();
    benchmark::ClobberMemory();
  }
  account(state, w, 4);
}

// scale_loop(x, n): one of scale_loops().
template <class ScaleLoop>
void scale_in_place(benchmark::State& state, const Workload& w, ScaleLoop scale_loop) {
  Buffer<float> x(static_cast<std::size_t>(w.elements()), 1.0f);
  for (auto _ : state) {
    scale_loop(x.data(), x.size());
    benchmark::ClobberMemory();
  }
  account(state, w, 4);
}

std::string prefetched(const char* roof, std::size_t kib) {
  return std::string(roof) + "_prefetch" + std::to_string(kib) + "k";
}

}  // namespace

TwoThreadCopy::TwoThreadCopy(const float* in, float* out, std::size_t n)
    : in_(in), out_(out), n_(n), half_(n / 2 / 16 * 16), other_([this] {
        for (int seen = 0;;) {
          int now;
          while ((now = calls_.load(std::memory_order_acquire)) == seen) _mm_pause();
          if (now < 0) return;
          stream_copy_nontemporal(in_ + half_, out_ + half_, n_ - half_);
          seen = now;
          done_.store(now, std::memory_order_release);
        }
      }) {}

TwoThreadCopy::~TwoThreadCopy() {
  calls_.store(-1, std::memory_order_release);
  other_.join();
}

void TwoThreadCopy::run() {
  const int n = ++handed_;
  calls_.store(n, std::memory_order_release);
  stream_copy_nontemporal(in_, out_, half_);
  while (done_.load(std::memory_order_acquire) != n) _mm_pause();
}

TwoThreadRead::TwoThreadRead(std::vector<Array> arrays, std::function<std::uint32_t(const std::uint8_t*, std::size_t)> read)
    : arrays_(std::move(arrays)), read_(std::move(read)), other_([this] {
        for (int seen = 0;;) {
          int now;
          const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(100);
          while ((now = calls_.load(std::memory_order_acquire)) == seen) {
            if (std::chrono::steady_clock::now() < until) {
              _mm_pause();
            } else {
              calls_.wait(seen, std::memory_order_acquire);
            }
          }
          if (now < 0) return;
          sink_.fetch_add(half(1), std::memory_order_relaxed);
          seen = now;
          done_.store(now, std::memory_order_release);
        }
      }) {}

TwoThreadRead::~TwoThreadRead() {
  calls_.store(-1, std::memory_order_release);
  calls_.notify_one();
  other_.join();
}

std::uint32_t TwoThreadRead::half(int which) const {
  std::uint32_t sum = 0;
  for (const Array& a : arrays_) {
    const std::size_t first = a.bytes / 2 / 64 * 64;
    sum += which == 0 ? read_(a.p, first) : read_(a.p + first, a.bytes - first);
  }
  return sum;
}

void TwoThreadRead::run() {
  const int n = ++handed_;
  calls_.store(n, std::memory_order_release);
  calls_.notify_one();
  sink_.fetch_add(half(0), std::memory_order_relaxed);
  while (done_.load(std::memory_order_acquire) != n) _mm_pause();
}

std::vector<ReadRoof> read_loops() {
  std::vector<ReadRoof> loops{{"read", stream_read}};
  for (const std::size_t kib : kRoofPrefetchKiB) {
    loops.push_back({prefetched("read", kib), [ahead = kib * 1024](const std::uint8_t* p, std::size_t bytes) {
                       return stream_read_prefetched(p, bytes, ahead);
                     }});
  }
  for (const std::size_t streams : {2, 4}) {
    loops.push_back({"read_" + std::to_string(streams) + "streams",
                     [streams](const std::uint8_t* p, std::size_t bytes) { return stream_read_streams(p, bytes, streams); }});
  }
  return loops;
}

std::vector<CopyRoof> copy_loops() {
  std::vector<CopyRoof> loops{{"copy", stream_copy}, {"copy_nontemporal", stream_copy_nontemporal}};
  for (const std::size_t kib : kRoofPrefetchKiB) {
    loops.push_back({prefetched("copy_nontemporal", kib), [ahead = kib * 1024](const float* in, float* out, std::size_t n) {
                       stream_copy_nontemporal_prefetched(in, out, n, ahead);
                     }});
  }
  for (const std::size_t streams : {2, 4}) {
    loops.push_back({"copy_nontemporal_" + std::to_string(streams) + "streams",
                     [streams](const float* in, float* out, std::size_t n) { stream_copy_nontemporal_streams(in, out, n, streams); }});
  }
  return loops;
}

std::vector<ScaleRoof> scale_loops() {
  std::vector<ScaleRoof> loops{{"scale_in_place", [](float* x, std::size_t n) { stream_scale_in_place(x, n, 1.0f); }}};
  for (const std::size_t kib : kRoofPrefetchKiB) {
    loops.push_back({prefetched("scale_in_place", kib), [ahead = kib * 1024](float* x, std::size_t n) {
                       stream_scale_in_place_prefetched(x, n, 1.0f, ahead);
                     }});
  }
  for (const std::size_t streams : {2, 4}) {
    loops.push_back({"scale_in_place_" + std::to_string(streams) + "streams",
                     [streams](float* x, std::size_t n) { stream_scale_in_place_streams(x, n, 1.0f, streams); }});
  }
  return loops;
}

std::vector<std::string> copy_roofs(const std::string& w) {
  std::vector<std::string> names;
  for (const CopyRoof& loop : copy_loops()) names.push_back(loop.prefix + "/" + w);
  return names;
}

std::vector<std::string> scale_roofs(const std::string& w) {
  std::vector<std::string> names;
  for (const ScaleRoof& loop : scale_loops()) names.push_back(loop.prefix + "/" + w);
  return names;
}

void register_roofs() {
  for (const Workload& w : workloads()) {
    for (const CopyRoof& loop : copy_loops()) {
      add(loop.prefix + "/" + w.name, [w, run = loop.run](benchmark::State& st) { copy(st, w, run); });
    }
    for (const ScaleRoof& loop : scale_loops()) {
      add(loop.prefix + "/" + w.name, [w, run = loop.run](benchmark::State& st) { scale_in_place(st, w, run); });
    }
  }
  for (const char* name : {"Q/A", "QK/A", "Q/B", "QK/B"}) {  // those rope_cases.cpp runs on 2 threads
    const Workload w = workload(name);
    add("copy_nontemporal_2threads/" + w.name, [w](benchmark::State& st) { copy_two_threads(st, w); });
  }
}

}  // namespace posenc::bench
