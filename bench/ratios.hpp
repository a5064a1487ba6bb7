#pragma once
#include <benchmark/benchmark.h>

#include <map>
#include <string>
#include <vector>

namespace posenc::bench {

// Keeps each benchmark's median over its repetitions, for the ratio table.
class Recorder : public benchmark::ConsoleReporter {
 public:
  std::map<std::string, double> items, bytes;
  void ReportRuns(const std::vector<Run>& runs) override;
};

// The ratio table: each ratio of medians from this one run, with its target where it has one.
void print_ratios(const Recorder& r);

}  // namespace posenc::bench
