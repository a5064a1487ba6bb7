// Attention with its positional encoding inside (SPEC.md section 2.7): decode and prefill shapes,
// RoPE with every scaling of published model configs, ALiBi with non-power-of-two head counts.
// Ill-conditioned rows, given tables and invalid cases are in attention_edge_vectors.cpp.
#include <cmath>

#include "attention_cases.hpp"
#include "published_configs.hpp"
#include "posenc/formulas/rope_frequencies.hpp"

namespace posenc::generator {
namespace attention_cases {

AttentionParams attention(std::int64_t head_dim, std::int64_t query_heads, std::int64_t kv_heads,
                          std::optional<RopeParams> rope, AttentionMask mask) {
  AttentionParams p;
  p.head_dim = p.value_dim = head_dim;
  p.query_heads = query_heads;
  p.kv_heads = kv_heads;
  p.rope = std::move(rope);
  p.mask = mask;
  return p;
}

RopeParams llama_rope(std::int64_t head_dim, double base, RopeLayout layout) {
  RopeParams r;
  r.head_dim = r.rotary_dim = head_dim;
  r.base = base;
  r.layout = layout;
  return r;
}

std::vector<double> grid(SplitMix64& rng, std::int64_t n, int shift) {
  auto v = grid_vector(rng, n);
  for (auto& x : v) x = std::ldexp(x, shift);
  return v;
}

Shape decode(std::int64_t keys, std::int64_t first, std::int64_t axes) {
  Shape s{1, keys, {}, {}};
  for (std::int64_t j = 0; j < keys; ++j) {
    for (std::int64_t a = 0; a < axes; ++a) s.key_positions.push_back(first + j);
  }
  for (std::int64_t a = 0; a < axes; ++a) s.query_positions.push_back(first + keys - 1);
  return s;
}

Shape prefill(std::int64_t queries, std::int64_t keys, std::int64_t first) {
  Shape s{queries, keys, {}, {}};
  for (std::int64_t j = 0; j < keys; ++j) s.key_positions.push_back(first + j);
  for (std::int64_t i = 0; i < queries; ++i) s.query_positions.push_back(first + keys - queries + i);
  return s;
}

namespace {

std::int64_t largest_position(const Shape& s) {
  std::int64_t m = 0;
  for (auto v : s.query_positions) m = std::max<std::int64_t>(m, std::llabs(v));
  for (auto v : s.key_positions) m = std::max<std::int64_t>(m, std::llabs(v));
  return m;
}

}  // namespace

VectorCase random_case(FileBuilder& b, const AttentionParams& p, const Shape& s, std::string comment,
                       std::vector<std::string> flags, int q_shift) {
  for (auto& f : position_flags(largest_position(s))) flags.push_back(f);
  VectorCase c = at_axes({}, std::move(comment), std::move(flags));
  c.attention.queries = s.queries;
  c.attention.keys = s.keys;
  c.attention.query_positions = s.query_positions;
  c.attention.key_positions = s.key_positions;
  c.attention.q = grid(b.rng(), s.queries * p.query_heads * p.head_dim, q_shift);
  c.attention.k = grid(b.rng(), s.keys * p.kv_heads * p.head_dim);
  c.attention.v = grid(b.rng(), s.keys * p.kv_heads * p.value_dim);
  return c;
}

std::string heads_text(const AttentionParams& p) {
  std::string s = std::to_string(p.query_heads) + " query heads";
  if (p.kv_heads != p.query_heads) s += " over " + std::to_string(p.kv_heads) + " KV heads";
  return s + ", head_dim " + std::to_string(p.head_dim);
}

void describe_attention_flags(FileBuilder& b) {
  describe_flags(b);
  b.note("Decode", "one query (the newest token) against every key of the cache, itself included");
  b.note("Prefill", "a causal block: the last queries of the sequence, each seeing the keys up to itself");
  b.note("GroupedQuery", "fewer KV heads than query heads: query head h reads KV head h / (query_heads / kv_heads)");
  b.note("FarPositions",
         "every position far from 0 while the distances stay small: attention depends on distances only, but an "
         "angle formed in binary32 is wrong there");
  b.note("ChunkedPrefill", "a block of queries after earlier tokens: the causal mask is aligned to the last key");
  b.note("ExplicitMask", "the case gives its own [queries][keys] mask");
  b.note("Bidirectional", "no mask: every query sees every key (an encoder)");
  b.note("SingleKey", "one visible key: O is that key's value");
  b.note("ManyKeys", "thousands of keys: long sums in the softmax and in P V");
  b.note("SmallLogits", "q scaled down so that the logits span a few units: bf16 and f16 can resolve their errors");
  b.note("LargeLogitRange",
         "q scaled up so that the logits of a row span 30 or more: the weights span e^-30 and more, the largest "
         "logit decides");
  b.note("NearTie",
         "two keys whose logits differ by about 2^-18 (keys one grid step apart): O lies near the mean of their "
         "values, often near a rounding midpoint");
  b.note("ExactTie", "keys whose logits are equal in exact arithmetic (equal keys at equal positions, or q = 0)");
  b.note("ValueCancellation",
         "two dominant keys with opposite values: |O| is far below sum_j p_j |v_j| (the element's scale)");
  b.note("AttentionSink",
         "a key aligned with the rotated query (q rotated back by the relative angle, rounded to the grid) takes "
         "most of the weight, as the first token does in long contexts");
  b.note("GivenTable",
         "the rotation's cos/sin rows are inputs (rope_table_given), the reference's rows correctly rounded to the "
         "group's format: judged in the formats where the table is exact");
}

namespace {

VectorFile decode_file() {
  FileBuilder b("attention", "decode", 5001);
  describe_attention_flags(b);
  const auto p = attention(64, 4, 2, llama_rope(64, 500000));
  b.group(CaseType::attention, p,
          "decode, Llama-style RoPE (half layout, base 500000), " + heads_text(p) + ", keys at 0 .. n - 1",
          kCommonGrid);
  for (std::int64_t n : {1, 2, 3, 17, 64, 256}) {
    std::vector<std::string> flags{"Decode", "GroupedQuery"};
    if (n == 1) flags.push_back("SingleKey");
    b.add(random_case(b, p, decode(n, 0), std::to_string(n) + " keys", flags));
  }
  b.group(CaseType::attention, p, "decode far from position 0: 64 keys ending at P", kCommonGrid);
  for (std::int64_t last : {std::int64_t{1} << 16, std::int64_t{1} << 20, std::int64_t{1} << 24, kMaxInt32}) {
    b.add(random_case(b, p, decode(64, last - 63), "64 keys, the query at " + std::to_string(last),
                      {"Decode", "GroupedQuery", "FarPositions"}));
  }
  // q at 2^-3 of the grid: logits of a few units, whose rounding bf16 and f16 can still resolve.
  b.group(CaseType::attention, p, "decode with small logits (q times 2^-3), keys ending at P", kCommonGrid);
  for (std::int64_t last : {std::int64_t{63}, std::int64_t{4095}, std::int64_t{1} << 20, kMaxInt32}) {
    b.add(random_case(b, p, decode(64, last - 63), "64 keys, the query at " + std::to_string(last),
                      {"Decode", "GroupedQuery", "SmallLogits"}, -3));
  }
  const auto interleaved = attention(64, 4, 2, llama_rope(64, 10000, RopeLayout::interleaved));
  b.group(CaseType::attention, interleaved, "decode, GPT-J-style RoPE (interleaved layout, base 10000), " +
                                                heads_text(interleaved), kCommonGrid);
  for (std::int64_t last : {std::int64_t{31}, std::int64_t{1} << 20, kMaxInt32}) {
    b.add(random_case(b, interleaved, decode(32, last - 31), "32 keys, the query at " + std::to_string(last),
                      {"Decode", "GroupedQuery"}, -2));
  }
  const auto plain = attention(64, 4, 4, std::nullopt);
  b.group(CaseType::attention, plain, "decode without a positional encoding, " + heads_text(plain), kCommonGrid);
  b.add(random_case(b, plain, decode(48, 0), "48 keys", {"Decode"}, -2));
  const auto many = attention(64, 2, 1, llama_rope(64, 500000));
  b.group(CaseType::attention, many, "decode over a long cache, " + heads_text(many), kCommonGrid);
  b.add(random_case(b, many, decode(4096, 100000), "4096 keys ending at 104095", {"Decode", "GroupedQuery", "ManyKeys"},
                    -2));
  return std::move(b).finish();
}

VectorFile prefill_file() {
  FileBuilder b("attention", "prefill", 5002);
  describe_attention_flags(b);
  const auto p = attention(32, 4, 2, llama_rope(32, 10000));
  b.group(CaseType::attention, p, "causal prefill, Llama-style RoPE, " + heads_text(p), kCommonGrid);
  for (std::int64_t first : {std::int64_t{0}, std::int64_t{1} << 20, kMaxInt32 - 15}) {
    b.add(random_case(b, p, prefill(16, 16, first), "16 tokens from position " + std::to_string(first),
                      {"Prefill", "GroupedQuery"}, -1));
  }
  b.add(random_case(b, p, prefill(8, 40, 0), "the last 8 of 40 tokens", {"Prefill", "GroupedQuery", "ChunkedPrefill"}, -1));
  // A sliding window of 8 keys (Mistral-style), as an explicit mask.
  auto window = p;
  window.mask = AttentionMask::explicit_;
  b.group(CaseType::attention, window, "a sliding window of 8 keys as an explicit mask, " + heads_text(window), kCommonGrid);
  for (std::int64_t first : {std::int64_t{0}, std::int64_t{1} << 24}) {
    VectorCase c = random_case(b, window, prefill(16, 24, first), "16 queries over 24 keys from position " +
                                                                     std::to_string(first) + ", window 8",
                               {"Prefill", "GroupedQuery", "ExplicitMask"}, -1);
    for (std::int64_t i = 0; i < 16; ++i) {
      for (std::int64_t j = 0; j < 24; ++j) {
        const std::int64_t self = i + 8;
        c.attention.mask.push_back(j <= self && j > self - 8 ? 1 : 0);
      }
    }
    b.add(std::move(c));
  }
  const auto encoder = attention(32, 2, 2, llama_rope(32, 10000, RopeLayout::interleaved), AttentionMask::none);
  b.group(CaseType::attention, encoder, "no mask (bidirectional), RoFormer-style interleaved RoPE, " + heads_text(encoder),
          kCommonGrid);
  b.add(random_case(b, encoder, prefill(12, 12, 0), "12 tokens", {"Bidirectional"}, -1));
  return std::move(b).finish();
}

// Decode at the start of the context, near its end and beyond it, for one model's RoPE.
void model_decode(FileBuilder& b, const AttentionParams& p, const std::string& what, std::vector<std::int64_t> lasts,
                  std::int64_t keys, std::vector<std::string> extra_flags = {}, int q_shift = -2) {
  b.group(CaseType::attention, p, what + ", " + heads_text(p), kCommonGrid);
  for (std::int64_t last : lasts) {
    std::vector<std::string> flags{"Decode", "ModelConfig"};
    flags.insert(flags.end(), extra_flags.begin(), extra_flags.end());
    if (p.kv_heads != p.query_heads) flags.push_back("GroupedQuery");
    b.add(random_case(b, p, decode(keys, last - keys + 1, p.position_axes()),
                      std::to_string(keys) + " keys, the query at " + std::to_string(last), flags, q_shift));
  }
}

VectorFile scalings_file() {
  FileBuilder b("attention", "scalings", 5003);
  describe_attention_flags(b);
  b.note("SoftmaxScaleMscale", "the softmax scale times g(factor, mscale_all_dim)^2 (DeepSeek-V2's correction)");
  b.note("FrequenciesOfSeqLen",
         "dynamic NTK or LongRoPE: every q and k of the case is rotated with the frequencies of the group's seq_len "
         "(SPEC.md section 2.7)");
  b.note("VisionTokens", "M-RoPE positions whose axes differ (image patches)");
  model_decode(b, attention(128, 4, 1, published::llama31_8b()), "Llama 3.1 8B RoPE (llama3 scaling)",
               {31, 8191, 131071, std::int64_t{1} << 20}, 32);
  // DeepSeek-V2's multi-head latent attention: a 192-wide q and k of which 64 dims carry RoPE
  // (rotated first here: the dot product does not depend on the order of the dims), v 128 wide,
  // and the softmax scale 1/sqrt(192) times mscale^2.
  auto deepseek_rope = published::deepseek_v2();
  deepseek_rope.head_dim = 192;
  auto deepseek = attention(192, 2, 2, deepseek_rope);
  deepseek.value_dim = 128;
  deepseek.scale_mscale_all_dim = 0.707;
  model_decode(b, deepseek, "DeepSeek-V2 attention (yarn factor 40 on 64 of 192 dims, value_dim 128, scale mscale^2/sqrt(192))",
               {31, 163839}, 32, {"SoftmaxScaleMscale", "PartialRotary"});
  model_decode(b, attention(64, 4, 1, published::gpt_oss()), "gpt-oss RoPE (yarn factor 32, untruncated)",
               {31, 131071}, 32);
  for (std::int64_t seq_len : {std::int64_t{4096}, std::int64_t{131072}}) {
    model_decode(b, attention(96, 2, 1, published::phi3_longrope(seq_len)),
                 "Phi-3 LongRoPE, seq_len " + std::to_string(seq_len) + " (" + (seq_len > 4096 ? "long" : "short") +
                     " factors), every position below it",
                 {seq_len - 1}, 32, {"FrequenciesOfSeqLen"});
  }
  auto dynamic = llama_rope(64, 10000);
  dynamic.scaling.kind = RopeScalingKind::dynamic;
  dynamic.scaling.factor = 2.0;
  dynamic.scaling.original_max_positions = 4096;
  dynamic.scaling.seq_len = 16384;
  model_decode(b, attention(64, 2, 1, dynamic), "dynamic NTK factor 2, original 4096, seq_len 16384", {16383}, 32,
               {"FrequenciesOfSeqLen"});
  auto linear = llama_rope(128, 10000);
  linear.scaling.kind = RopeScalingKind::linear;
  linear.scaling.factor = 4.0;
  model_decode(b, attention(128, 2, 1, linear), "position interpolation, linear factor 4 (LLaMA 7B shape)", {8191},
               32);
  auto neox = llama_rope(64, 10000);
  neox.rotary_dim = 16;
  model_decode(b, attention(64, 2, 2, neox), "GPT-NeoX-style partial rotary (rotary_pct 0.25: 16 of 64 dims)",
               {31, 1000000}, 32, {"PartialRotary"});
  auto proportional = llama_rope(64, 10000);
  proportional.rotary_dim = 32;
  proportional.partial = PartialRotary::proportional;
  model_decode(b, attention(64, 2, 1, proportional), "proportional partial rotary (Gemma p-RoPE: 32 of 64)", {4095},
               32, {"PartialRotary"});
  // Qwen2-VL: the text after an image, whose patches have distinct (t, h, w) positions.
  const auto qwen = attention(128, 2, 1, published::qwen2_vl());
  b.group(CaseType::attention, qwen, "Qwen2-VL M-RoPE: a text query after 24 image patches (t, h, w) and 8 text tokens, " +
                                         heads_text(qwen),
          kCommonGrid);
  Shape s{1, 32, {}, {}};
  for (std::int64_t j = 0; j < 24; ++j) s.key_positions.insert(s.key_positions.end(), {4, 4 + j / 6, 4 + j % 6});
  for (std::int64_t j = 0; j < 8; ++j) s.key_positions.insert(s.key_positions.end(), {10 + j, 10 + j, 10 + j});
  s.query_positions = {17, 17, 17};
  b.add(random_case(b, qwen, s, "24 patches at t = 4, then text at 10 .. 17", {"Decode", "ModelConfig", "VisionTokens"}, -2));
  // Appended (the tcIds before them stay): the scale's other two sources, and M-RoPE queries of
  // their own positions, which no group above reaches (docs/mutation.md).
  b.note("GivenScale", "the case gives the softmax scale (FlashAttention's softmax_scale): 1/16, not 1/sqrt(head_dim)");
  auto given = attention(64, 2, 1, llama_rope(64, 10000));
  given.scale = 0.0625;
  b.group(CaseType::attention, given, "decode with the softmax scale 1/16 given, Llama-style RoPE, " + heads_text(given),
          kCommonGrid);
  b.add(random_case(b, given, decode(32, 0), "32 keys", {"Decode", "GroupedQuery", "GivenScale"}, -1));
  b.note("ScaleDenominator",
         "the scale is 1/sqrt(scale_denominator), not 1/sqrt(head_dim) (Gemma 2's query_pre_attn_scalar)");
  auto gemma = attention(128, 2, 1, llama_rope(128, 10000));
  gemma.scale_denominator = 144.0;
  model_decode(b, gemma, "Gemma 2 27B's scale: query_pre_attn_scalar 144 for head_dim 128 (scale 1/12), RoPE base 10000",
               {31, 8191}, 32, {"ScaleDenominator"});
  b.note("MultiAxisPrefill",
         "M-RoPE with several query rows: query row i's positions are its 3 axes at i x 3 of query_positions (a "
         "kernel that indexes them as 1-D RoPE's reads another token's)");
  b.group(CaseType::attention, qwen, "Qwen2-VL M-RoPE prefill: the last 4 of 8 text tokens after 24 image patches, " +
                                         heads_text(qwen),
          kCommonGrid);
  b.add(random_case(b, qwen, Shape{4, 32, {14, 14, 14, 15, 15, 15, 16, 16, 16, 17, 17, 17}, s.key_positions},
                    "24 patches at t = 4, text at 10 .. 17, the queries at 14 .. 17",
                    {"Prefill", "ModelConfig", "VisionTokens", "MultiAxisPrefill"}, -2));
  return std::move(b).finish();
}

VectorFile alibi_file() {
  FileBuilder b("attention", "alibi", 5004);
  describe_attention_flags(b);
  b.note("NonPowerOfTwoHeads", "a head count that is not a power of two: the paper's interleaved slopes of 2m heads");
  b.note("Symmetric", "bias -slope |i - j| (bidirectional ALiBi)");
  for (std::int64_t heads : {8, 12, 20, 40, 48, 80}) {
    auto p = attention(16, heads, heads, std::nullopt);
    AlibiParams alibi;
    alibi.n_heads = heads;
    p.alibi = alibi;
    std::vector<std::string> flags{"Decode"};
    if ((heads & (heads - 1)) != 0) flags.push_back("NonPowerOfTwoHeads");
    b.group(CaseType::attention, p, "ALiBi (causal) with " + heads_text(p), kCommonGrid);
    b.add(random_case(b, p, decode(32, 0), "32 keys", flags, -1));
    if (heads == 12) {
      auto far = flags;
      far.push_back("FarPositions");
      b.add(random_case(b, p, decode(32, (std::int64_t{1} << 24) - 31), "32 keys ending at 2^24", far, -1));
    }
  }
  auto symmetric = attention(16, 12, 12, std::nullopt, AttentionMask::none);
  AlibiParams alibi;
  alibi.n_heads = 12;
  alibi.mode = AlibiMode::symmetric;
  symmetric.alibi = alibi;
  b.group(CaseType::attention, symmetric, "bidirectional ALiBi (symmetric), " + heads_text(symmetric), kCommonGrid);
  b.add(random_case(b, symmetric, prefill(6, 6, 0), "6 tokens, no mask", {"Symmetric", "NonPowerOfTwoHeads"}, -1));
  // Appended (the tcIds before them stay; docs/mutation.md): a row whose logits span more than any
  // exp can take without the maximum subtracted, and ALiBi beside M-RoPE, where the bias reads
  // the first position axis.
  b.note("HugeLogitRange",
         "head 0's bias reaches -20000 (slope 1/2, distance 40000): its logits span more than 11356, past which "
         "e^x overflows even long double (binary32: 88), so only a softmax that subtracts the row's maximum stays "
         "finite");
  auto far = attention(16, 8, 8, std::nullopt);
  far.alibi = AlibiParams{};
  far.alibi->n_heads = 8;
  b.group(CaseType::attention, far, "ALiBi (causal) over 40000 positions, " + heads_text(far), kCommonGrid);
  Shape spread{1, 16, {40000}, {}};
  for (std::int64_t j = 0; j < 8; ++j) spread.key_positions.push_back(j);
  for (std::int64_t j = 0; j < 8; ++j) spread.key_positions.push_back(39993 + j);
  b.add(random_case(b, far, spread, "8 keys at 0 .. 7 and 8 at 39993 .. 40000, the query at 40000",
                    {"Decode", "HugeLogitRange"}, -1));
  b.note("RopeWithAlibi", "RoPE (M-RoPE here) and ALiBi in one attention: the bias reads each token's first position axis");
  auto both = attention(128, 2, 2, published::qwen2_vl());
  both.alibi = AlibiParams{};
  both.alibi->n_heads = 2;
  b.group(CaseType::attention, both, "Qwen2-VL's M-RoPE with ALiBi: the bias on the temporal axis, " + heads_text(both),
          kCommonGrid);
  Shape patches{1, 32, {17, 17, 17}, {}};
  for (std::int64_t j = 0; j < 24; ++j) patches.key_positions.insert(patches.key_positions.end(), {4, 4 + j / 6, 4 + j % 6});
  for (std::int64_t j = 0; j < 8; ++j) patches.key_positions.insert(patches.key_positions.end(), {10 + j, 10 + j, 10 + j});
  b.add(random_case(b, both, patches, "24 patches at t = 4, then text at 10 .. 17", {"Decode", "RopeWithAlibi"},
                    -2));
  return std::move(b).finish();
}

}  // namespace

}  // namespace attention_cases

std::vector<VectorFile> attention_vectors() {
  using namespace attention_cases;
  return {decode_file(),   prefill_file(),      scalings_file(), alibi_file(),
          conditioning_file(), tables_file(), invalid_file()};
}

}  // namespace posenc::generator
