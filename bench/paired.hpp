#pragma once
#include <functional>
#include <string>
#include <vector>

namespace posenc::bench {

// A ratio of speeds measured in pairs: rounds of a timed batch of `a` beside a timed batch of
// each of `b` (same batch size, within milliseconds of each other, the order reversed every
// other round), each round giving the fastest b's time over a's. The median over the rounds and
// its quartiles. On shared machines a slow spell lasts longer than a round, so it slows both
// sides of a round alike, where ratios of separately timed medians can swing by a third (issue
// 19's Zen 3 round: Q+K in place at shape A read 0.99, 0.73 and 0.91 in three runs).
struct PairedRatio {
  double median, q1, q3;
  int rounds;
};
PairedRatio paired_ratio(const std::function<void()>& a, const std::vector<std::function<void()>>& b, int rounds);

// paired/...: the ratios issue 19 sets targets for, each as a benchmark with counters ratio,
// q1, q3 and rounds (ratios.cpp prints them): fused f32 against the same tensors' copies (out of
// place) and in-place scales (in place) for Q, GQA and QK at shapes A and B, at the same
// positions every call (a forward pass's later layers, whose rows the call keeps: rope.cpp,
// KeptRows) and 16 positions on every call (-moving: every row computed, as a pass's first layer
// computes them); 2 threads against 1
// (and the non-temporal copy likewise: the machine's own scaling); bf16 against f32 elements
// per second; decode against the copies of its bytes.
void register_paired();

}  // namespace posenc::bench
