#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace posenc::bench {

// A ratio of speeds measured in pairs: rounds of a timed batch of `a` beside a timed batch of each
// of `b` (same batch size, within milliseconds of each other, the order reversed every other
// round), each round giving each b's time over a's. On shared machines a slow spell lasts longer
// than a round, so it slows both sides of a round alike, where ratios of separately timed medians
// can swing by a third (Q+K in place at shape A: 0.73 to 0.99 in three runs). The result is the
// fastest b's: the one whose median ratio over the rounds is the lowest, with that median, its
// quartiles, and its index in b. Not the median of each round's fastest b: the fastest of several
// noisy times is biased fast (a copy against 6 copies of itself, whose true ratio is 1, reads
// 0.92-0.98 by that estimator and 0.97-1.01 by this one: register_paired's control).
struct PairedRatio {
  double median, q1, q3;
  int rounds;
  std::size_t fastest;  // index in b
  double median_of_fastest_each_round;  // the biased estimator, kept for the control's line
};
PairedRatio paired_ratio(const std::function<void()>& a, const std::vector<std::function<void()>>& b, int rounds);

// A paired ratio with its fastest roof's name (empty where the ratio has no roofs): what a
// paired benchmark reports (its counters and label) and the ratio table reads back (ratios.hpp).
struct NamedRatio {
  PairedRatio ratio;
  std::string roof;
};

// One benchmark of one iteration whose result is the paired ratio make_ratio() measures (its
// objects built inside it), reported as register_paired's are: counters ratio, q1, q3 and rounds,
// the fastest roof's name as the label (ratios.cpp reads them).
void add_paired_ratio(const std::string& name, std::function<NamedRatio()> make_ratio);

// paired/...: the ratios the bench sets targets for, each as a benchmark with counters ratio, q1,
// q3 and rounds (ratios.cpp prints them with their targets): fused f32 against the same tensors'
// copies (out of place) and in-place scales (in place) for Q, GQA and QK at shapes A and B, at the
// same positions every call (a forward pass's later layers, whose rows the call keeps: rope.cpp,
// KeptRows) and 16 positions on every call (-moving: every row computed, as a pass's first layer
// computes them); fused f32 out of place against a plain streaming rotation loop handed its rows,
// on the same tensors (-vs-plain: whether a gap to the copy is the fast path's or the rotation's);
// 2 threads against 1 (and the non-temporal copy likewise: the machine's own scaling); bf16
// against f32 elements per second; decode against the copies of its bytes: one call at the same
// position, one at a new anchor every call, and a decode step of Llama 3 8B's 32 layers
// (Case::layers: the target's case, a call per layer, the first at the next position). Each roof's
// name is the benchmark's label. And the estimator's control: shape B's non-temporal copy against
// as many copies of itself as there are copy roofs, whose true ratio is 1.
void register_paired();

}  // namespace posenc::bench
