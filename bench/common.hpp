#pragma once
// What every benchmark of bench/ shares: the workloads (shapes engines run), their positions and
// tensors, and how a benchmark is registered.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include "posenc/fast/fast.hpp"

namespace posenc::bench {

// Tensors 64-byte aligned, as PyTorch's CPU allocator returns them (c10/core/alignment.h,
// gAlignment = 64): the fast path's own line-aligned allocator.
template <class T>
using Buffer = std::vector<T, fast::detail::LineAligned<T>>;

constexpr std::int64_t kDim = 128;  // head_dim of Llama 3 8B
constexpr int kLlama3Layers = 32;  // num_hidden_layers of Llama 3 8B (its config.json)

// One RoPE call's worth of work: `tokens` tokens of one tensor or two (Q and K) of head_dim 128,
// each with its own head count (RopeTensor::heads).
struct Workload {
  std::string name;
  std::int64_t tokens;
  std::vector<std::int64_t> heads;  // per tensor
  bool scattered = false;           // positions random (a batch of sequences), else consecutive
  std::int64_t elements() const;    // of all tensors, in (as many out)
};

// Shape A: 512 tokens (a Q+K f32 call moves 16 MiB each way: in L3 on most servers); B: 4096
// tokens (128 MiB: DRAM). Q alone, Llama 3 8B's grouped-query Q (32 heads) and K (8 heads), Q
// and K of 32 heads each; decode: one token of 32 Q heads then 8 K heads in one row (as a fused
// QKV projection lays them out), and 64 such tokens of sequences at scattered positions.
std::vector<Workload> workloads();
Workload workload(const std::string& name);

RopeParams llama(RopeLayout layout);
std::vector<std::int64_t> positions(const Workload& w);
// Values in [-4, 4] (activations' range: no subnormal products to slow anything down); bf16 and
// f16 inputs are the binary32 values' nearest storage values. Generated once per size and format.
Buffer<std::uint8_t> random_tensor(std::int64_t elements, fast::DType d);

// The cos and sin of every position, [positions][kDim / 2] each (RopePlan::table_row, the half
// layout's row): what the baselines handed a table rotate by.
struct Tables {
  std::vector<float> cos, sin;
};
Tables tables(const fast::RopePlan& plan, const std::vector<std::int64_t>& positions);

// Bytes (read + written) and elements of `calls` calls on w per iteration.
void account(benchmark::State& state, const Workload& w, std::size_t element_size, int calls = 1);

// Every benchmark: real time, 11 repetitions reported as aggregates (the ratio table uses
// medians).
template <class F>
void add(const std::string& name, F f) {
  benchmark::RegisterBenchmark(name.c_str(), f)->UseRealTime()->MinTime(0.1)->Repetitions(11)->ReportAggregatesOnly();
}

}  // namespace posenc::bench
