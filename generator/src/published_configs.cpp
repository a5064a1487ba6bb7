#include "published_configs.hpp"

namespace posenc::generator::published {
namespace {

RopeParams rope(std::int64_t head_dim, double base, RopeLayout layout, RopeScalingKind kind) {
  RopeParams p;
  p.head_dim = p.rotary_dim = head_dim;
  p.base = base;
  p.layout = layout;
  p.scaling.kind = kind;
  return p;
}

}  // namespace

RopeParams llama31_8b() {
  auto p = rope(128, 500000.0, RopeLayout::half, RopeScalingKind::llama3);
  p.scaling.factor = 8.0;
  p.scaling.low_freq_factor = 1.0;
  p.scaling.high_freq_factor = 4.0;
  p.scaling.original_max_positions = 8192;
  return p;
}

RopeParams deepseek_v2() {
  auto p = rope(64, 10000.0, RopeLayout::interleaved, RopeScalingKind::yarn);
  p.scaling.factor = 40.0;
  p.scaling.original_max_positions = 4096;
  p.scaling.beta_fast = 32.0;
  p.scaling.beta_slow = 1.0;
  p.scaling.mscale = 0.707;
  p.scaling.mscale_all_dim = 0.707;
  return p;
}

RopeParams gpt_oss() {
  auto p = rope(64, 150000.0, RopeLayout::half, RopeScalingKind::yarn);
  p.scaling.factor = 32.0;
  p.scaling.original_max_positions = 4096;
  p.scaling.beta_fast = 32.0;
  p.scaling.beta_slow = 1.0;
  p.scaling.truncate = false;
  return p;
}

RopeParams phi3_longrope(std::int64_t seq_len) {
  // config.json's rope_scaling (type "su", i.e. LongRoPE).
  const std::vector<double> long_factor{
      1.0299999713897705, 1.0499999523162842, 1.0499999523162842, 1.0799999237060547, 1.2299998998641968,
      1.2299998998641968, 1.2999999523162842, 1.4499999284744263, 1.5999999046325684, 1.6499998569488525,
      1.8999998569488525, 2.859999895095825,  3.68999981880188,   5.419999599456787,  5.489999771118164,
      5.489999771118164,  9.09000015258789,   11.579999923706055, 15.65999984741211,  15.769999504089355,
      15.789999961853027, 18.360000610351562, 21.989999771118164, 23.079999923706055, 30.009998321533203,
      32.35000228881836,  32.590003967285156, 35.56000518798828,  39.95000457763672,  53.840003967285156,
      56.20000457763672,  57.95000457763672,  59.29000473022461,  59.77000427246094,  59.920005798339844,
      61.190006256103516, 61.96000671386719,  62.50000762939453,  63.3700065612793,   63.48000717163086,
      63.48000717163086,  63.66000747680664,  63.850006103515625, 64.08000946044922,  64.760009765625,
      64.80001068115234,  64.81001281738281,  64.81001281738281};
  const std::vector<double> short_factor{
      1.05, 1.05, 1.05, 1.1, 1.1, 1.1, 1.2500000000000002, 1.2500000000000002, 1.4000000000000004,
      1.4500000000000004, 1.5500000000000005, 1.8500000000000008, 1.9000000000000008, 2.000000000000001,
      2.000000000000001, 2.000000000000001, 2.000000000000001, 2.000000000000001, 2.000000000000001,
      2.000000000000001, 2.000000000000001, 2.000000000000001, 2.000000000000001, 2.000000000000001,
      2.000000000000001, 2.000000000000001, 2.000000000000001, 2.000000000000001, 2.000000000000001,
      2.000000000000001, 2.000000000000001, 2.000000000000001, 2.1000000000000005, 2.1000000000000005, 2.2,
      2.3499999999999996, 2.3499999999999996, 2.3499999999999996, 2.3499999999999996, 2.3999999999999995,
      2.3999999999999995, 2.6499999999999986, 2.6999999999999984, 2.8999999999999977, 2.9499999999999975,
      3.049999999999997, 3.049999999999997, 3.049999999999997};
  auto p = rope(96, 10000.0, RopeLayout::half, RopeScalingKind::longrope);
  p.scaling.factor = 32.0;
  p.scaling.original_max_positions = 4096;
  p.scaling.seq_len = seq_len;
  p.scaling.short_factor = short_factor;
  p.scaling.long_factor = long_factor;
  return p;
}

RopeParams qwen2_vl() {
  auto p = rope(128, 1e6, RopeLayout::half, RopeScalingKind::none);
  p.mrope_section = {16, 24, 24};
  return p;
}

}  // namespace posenc::generator::published
