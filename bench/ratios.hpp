#pragma once
#include <benchmark/benchmark.h>

#include <map>
#include <string>
#include <vector>

#include "paired.hpp"

namespace posenc::bench {

// A paired ratio as its benchmark reported it (paired.cpp): the fastest roof's name, if it had
// roofs.
struct ReportedPair {
  PairedRatio ratio;
  std::string roof;
};

// Keeps each benchmark's median over its repetitions, and each paired ratio (paired.hpp), for
// the ratio table.
class Recorder : public benchmark::ConsoleReporter {
 public:
  std::map<std::string, double> items, bytes;
  std::map<std::string, ReportedPair> paired;
  void ReportRuns(const std::vector<Run>& runs) override;
};

// The ratio table from this one run: issue 19's targets as paired ratios, then ratios of medians,
// each with its target where it has one.
void print_ratios(const Recorder& r);

}  // namespace posenc::bench
