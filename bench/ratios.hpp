#pragma once
#include <benchmark/benchmark.h>

#include <map>
#include <string>
#include <vector>

#include "paired.hpp"

namespace posenc::bench {

// Keeps each benchmark's median over its repetitions, and each paired ratio (paired.hpp), for
// the ratio table.
class Recorder : public benchmark::ConsoleReporter {
 public:
  std::map<std::string, double> items, bytes;
  std::map<std::string, NamedRatio> paired;
  void ReportRuns(const std::vector<Run>& runs) override;
};

// The ratio table from this one run: the targets as paired ratios, then ratios of medians,
// each with its target where it has one.
void print_ratios(const Recorder& r);

}  // namespace posenc::bench
