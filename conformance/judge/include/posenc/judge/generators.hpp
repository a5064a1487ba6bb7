#pragma once
// RapidCheck generators of valid parameter sets of every family, shared by the backends'
// cross-check and the suite's differential property so both explore the same space.
#include <rapidcheck.h>

#include <cstdint>
#include <sstream>
#include <string>
#include <utility>

#include "posenc/params.hpp"

namespace posenc::generators {

// Scaling factors: round values models use, and arbitrary multiples of 2^-12 up to 256.
inline double positive_factor() {
  return *rc::gen::oneOf(rc::gen::element(0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 40.0),
                         rc::gen::map(rc::gen::inRange(1, 1 << 20), [](int v) { return v / 4096.0; }));
}

// Any valid RoPE configuration with head_dim <= 16: every scaling with its optional fields,
// both layouts, partial and proportional rotary, M-RoPE sections, the inverse rotation.
inline RopeParams any_rope_params() {
  RopeParams p;
  p.head_dim = 2 * *rc::gen::inRange<std::int64_t>(1, 9);
  p.rotary_dim = 2 * *rc::gen::inRange<std::int64_t>(1, p.head_dim / 2 + 1);
  p.base = *rc::gen::oneOf(rc::gen::element(10000.0, 500000.0, 1e6, 150000.0, 1.5),
                           rc::gen::map(rc::gen::inRange(1, 1 << 24), [](int v) { return 1.0 + v / 64.0; }));
  p.layout = *rc::gen::element(RopeLayout::interleaved, RopeLayout::half);
  p.inverse = *rc::gen::arbitrary<bool>();
  auto& s = p.scaling;
  s.kind = *rc::gen::element(RopeScalingKind::none, RopeScalingKind::linear, RopeScalingKind::ntk,
                             RopeScalingKind::dynamic, RopeScalingKind::yarn, RopeScalingKind::llama3,
                             RopeScalingKind::longrope);
  if (p.rotary_dim < 4 && (s.kind == RopeScalingKind::ntk || s.kind == RopeScalingKind::dynamic)) {
    s.kind = RopeScalingKind::linear;
  }
  if (s.kind != RopeScalingKind::none) s.factor = positive_factor();
  auto original = [] { return *rc::gen::inRange<std::int64_t>(2, 20000); };
  switch (s.kind) {
    case RopeScalingKind::dynamic:
      s.original_max_positions = original();
      s.seq_len = *rc::gen::inRange<std::int64_t>(1, 40000);
      break;
    case RopeScalingKind::yarn: {
      s.original_max_positions = original();
      if (*rc::gen::arbitrary<bool>()) {  // else Hugging Face's defaults
        auto betas = *rc::gen::element(std::pair{32.0, 1.0}, std::pair{1.0, 1.0}, std::pair{16.0, 2.0});
        s.beta_fast = betas.first;
        s.beta_slow = betas.second;
      }
      if (*rc::gen::arbitrary<bool>()) s.truncate = *rc::gen::arbitrary<bool>();
      if (*rc::gen::arbitrary<bool>()) {
        s.mscale = *rc::gen::element(0.707, 1.0, 0.5);
        s.mscale_all_dim = *rc::gen::element(0.707, 1.0);
      }
      if (*rc::gen::arbitrary<bool>()) s.attention_factor = positive_factor();
      break;
    }
    case RopeScalingKind::llama3:
      s.original_max_positions = original();
      s.low_freq_factor = *rc::gen::element(1.0, 0.5, 2.0);
      s.high_freq_factor = *s.low_freq_factor * *rc::gen::element(2.0, 4.0, 1.5);
      break;
    case RopeScalingKind::longrope:
      s.original_max_positions = original();
      s.seq_len = *rc::gen::inRange<std::int64_t>(1, 40000);
      for (std::int64_t i = 0; i < p.rotary_dim / 2; ++i) {
        s.short_factor.push_back(positive_factor());
        s.long_factor.push_back(positive_factor());
      }
      if (*rc::gen::arbitrary<bool>()) s.attention_factor = positive_factor();
      break;
    default:
      break;
  }
  if (s.kind == RopeScalingKind::none || s.kind == RopeScalingKind::linear) {
    if (*rc::gen::arbitrary<bool>()) p.partial = PartialRotary::proportional;
  }
  if (p.partial == PartialRotary::standard && p.rotary_dim >= 6 && *rc::gen::arbitrary<bool>()) {
    std::int64_t pairs = p.rotary_dim / 2;
    std::int64_t first = *rc::gen::inRange<std::int64_t>(1, pairs - 1);
    std::int64_t second = *rc::gen::inRange<std::int64_t>(1, pairs - first);
    p.mrope_section = {first, second, pairs - first - second};
  }
  return p;
}

inline SinusoidalParams any_sinusoidal_params() {
  SinusoidalParams p;
  p.d_model = 2 * *rc::gen::inRange<std::int64_t>(1, 9);
  p.base = *rc::gen::element(10000.0, 500.0, 1e6, 1.25);
  p.layout = *rc::gen::element(SinusoidalLayout::interleaved, SinusoidalLayout::concatenated);
  p.frequencies = *rc::gen::element(SinusoidalFrequencies::paper, SinusoidalFrequencies::tensor2tensor);
  return p;
}

inline std::string describe(const RopeParams& p) {
  std::ostringstream os;
  os << "head_dim=" << p.head_dim << " rotary_dim=" << p.rotary_dim << " base=" << std::hexfloat << p.base
     << " layout=" << to_string(p.layout) << " partial=" << to_string(p.partial) << " inverse=" << p.inverse
     << " scaling=" << to_string(p.scaling.kind) << " mrope_sections=" << p.mrope_section.size();
  return os.str();
}

inline std::string describe(const SinusoidalParams& p) {
  std::ostringstream os;
  os << "d_model=" << p.d_model << " base=" << p.base << " layout=" << to_string(p.layout)
     << " frequencies=" << to_string(p.frequencies);
  return os.str();
}

}  // namespace posenc::generators
