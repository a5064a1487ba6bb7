// posenc fast against its baselines, in one run (the machines are shared and noisy: only ratios
// measured together mean anything). `make bench` runs it; the ratio table at the end is what
// docs/fast.md quotes. Google Benchmark's flags apply (--benchmark_filter=REGEX runs a subset).
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "attention_cases.hpp"
#include "naive_cases.hpp"
#include "paired.hpp"
#include "ratios.hpp"
#include "roofs.hpp"
#include "rope_cases.hpp"
#include "row_cost.hpp"

int main(int argc, char** argv) {
  using namespace posenc::bench;
  register_roofs();
  register_rope_cases();
  register_row_cost();
  register_naive_cases();
  register_paired();
  register_attention_cases();
  // The machines are shared: repetitions of all benchmarks interleaved in random order, so that
  // a slow spell hits every benchmark alike, and ratios of medians.
  std::vector<char*> args(argv, argv + argc);
  std::string interleave = "--benchmark_enable_random_interleaving=true";
  args.insert(args.begin() + 1, interleave.data());
  int n_args = static_cast<int>(args.size());
  benchmark::Initialize(&n_args, args.data());
  Recorder r;
  benchmark::RunSpecifiedBenchmarks(&r);
  print_ratios(r);
  benchmark::Shutdown();
  return 0;
}
