// llama.cpp's ggml CPU RoPE (ggml_rope_ext, ggml_rope_multi and their _back, llama-cpp-python
// 0.3.36's vendored ggml 0.25.3) behind posenc's plugin ABI (posenc/plugin.h), for
// `posenc conform --impl posenc_llamacpp_plugin.so`. Only posenc/plugin.h and ggml's public
// headers (ggml.h, ggml-cpu.h) are used; ggml is built from the sdist by peers/llamacpp/build-ggml.sh.
//
// How posenc's parameters (conformance/SPEC.md section 2.3, 2.4) become ggml's arguments, with
// what llama.cpp itself passes (its model loader and graph code) where ggml leaves a choice:
//   tensor a        x as a [head_dim, n_heads, n_tokens] tensor of GGML_TYPE_F32 or GGML_TYPE_F16
//                   (storage f32, f16; ggml's CPU rope asserts one of the two, so f64 and bf16
//                   are unsupported); rotated in float32 and stored back (rotate_pairs in
//                   ggml-cpu/ops.cpp).
//   tensor b        positions as GGML_TYPE_I32: a position outside int32 is unsupported (never
//                   wrapped or clamped); M-RoPE: 4 int32 per token, axis-major, missing axes 0.
//   n_dims          rotary_dim (standard partial rotary: ggml rotates the first n_dims elements
//                   and copies the rest; theta_scale = powf(freq_base, -2.0f/n_dims), so the
//                   frequencies are over rotary_dim, as posenc's `standard`). `proportional` is
//                   unsupported: ggml has one n_dims for both the exponent's dimension and the
//                   rotated span.
//   mode            layout interleaved -> GGML_ROPE_TYPE_NORMAL, half -> GGML_ROPE_TYPE_NEOX;
//                   M-RoPE (mrope_section) -> ggml_rope_multi with GGML_ROPE_TYPE_MROPE, which
//                   has NEOX ordering only (ggml.h), so interleaved M-RoPE is unsupported.
//   inverse         ggml_rope_ext_back / ggml_rope_multi_back (the same kernel with sin negated,
//                   ggml_compute_forward_rope_flt's sin_sign).
//   freq_base       (float)base (llama.cpp keeps rope.freq_base as float32 in GGUF).
//   freq_scale      1 (none); 1.0f/(float)factor (linear, yarn), as llama.cpp's
//                   rope_freq_scale_train = 1.0f/ropescale.
//   ext_factor      0 (none, linear, longrope); 1 (yarn), llama.cpp's default yarn_ext_factor
//                   for LLAMA_ROPE_SCALING_TYPE_YARN.
//   n_ctx_orig      yarn: original_max_positions (unsupported past INT_MAX); else 0 (unused).
//   beta_fast/slow  yarn: (float)beta_fast, (float)beta_slow (defaults 32 and 1, SPEC 2.4).
//   attn_factor     the kernel scales cos and sin by attn_factor, and with ext_factor != 0 also
//                   by 1 + 0.1f*logf(1/freq_scale) (rope_yarn, ggml-cpu/ops.cpp). 1 for none and
//                   linear. yarn: as llama.cpp's llama_context constructor (src/llama-context.cpp)
//                   sets cparams.yarn_attn_factor: posenc's m (SPEC 2.4: attention_factor, or
//                   g(s, mscale)/g(s, mscale_all_dim), or g(s, 1)) times 1.0f/(1.0f + 0.1f*logf(factor)),
//                   factor = 1/freq_scale, which cancels the kernel's own factor ("when YARN is
//                   applied with yarn_ext_factor != 0.0f, we need to cancel this factor"); m is
//                   formed in binary64 and rounded to float, the rest in float as there.
//                   longrope: (float)m, m in binary64 as llama.cpp's GGUF converter forms the
//                   rope.scaling.attn_factor it stores (conversion/phi.py: sqrt(1 + log(scale)/
//                   log(original)), scale = max/original positions, which is posenc's factor in
//                   the shipped vectors), or attention_factor when given.
//   tensor c        freq_factors (theta_i / c_i): longrope's long_factor when seq_len >
//                   original_max_positions, else short_factor, as float32 (llama_model::
//                   get_rope_factors in src/llama-model.cpp picks rope_long when n_ctx_seq >
//                   n_ctx_orig_yarn). Nothing else: llama3's factors (rope_freqs) are computed by
//                   the GGUF converter (conversion/llama.py, generate_extra_tensors), not by
//                   ggml, so llama3 is unsupported rather than computed here.
// Unsupported (POSENC_UNSUPPORTED): f64 and bf16 storage, positions outside int32, `proportional`,
// interleaved M-RoPE, scalings ntk and dynamic (ggml takes freq_base as given and has no NTK
// argument), llama3 (see above), yarn with truncate false (ggml's
// ggml_rope_yarn_corr_dims always floors and ceils).
//
// posenc_attention (SPEC.md section 2.7) as llama.cpp's graph builds attention (llm_graph_context::
// build_attn_mha in src/llama-graph.cpp, llama-cpp-python 0.3.36's llama.cpp), one of four modes
// chosen by the environment variable POSENC_LLAMACPP_ATTENTION (peers/llamacpp/run.sh sets it per
// row; unset: flash-kvf16, llama.cpp's defaults for a CPU with flash attention on):
//   flash-kvf16, flash-kvf32      ggml_flash_attn_ext(q, k, v, mask, kq_scale, max_bias, 0)
//   softmax-kvf16, softmax-kvf32  kq = ggml_mul_mat(k, q); ggml_soft_max_ext(kq, mask, kq_scale,
//                                 max_bias); ggml_mul_mat(v transposed, kq)
// kvf16/kvf32: the KV cache's type (llama.cpp's --cache-type-k/-v, default f16): k and v are
// copied into it (ggml_cpy) after RoPE, as llama_kv_cache::cpy_k/cpy_v store them.
//   q, k, v        float32 tensors [head_dim, heads, tokens] (llama.cpp's activations are float32;
//                  f16 storage is converted exactly); storage f32 and f16 only (bf16 and f64:
//                  unsupported).
//   RoPE           ggml_rope_ext on q and on k before the cache, with the arguments above; then q,
//                  k, v permuted to [dim, tokens, heads] (ggml_permute(..., 0, 2, 1, 3)).
//   mask           [n_keys, n_queries]: 0 where visible, -INFINITY where not; with ALiBi the
//                  visible entries are -|p_i - p_j| (llama_kv_cache::set_input_kq_mask with
//                  hparams.use_alibi), and ggml multiplies the mask by the head's slope. f16 for
//                  flash attention (llama.cpp casts it: ggml_cast(kq_mask, GGML_TYPE_F16)), f32
//                  else. A distance past 2048 is not an f16 integer: those cases are unsupported.
//   max_bias       8.0f with ALiBi (llama.cpp's f_max_alibi_bias for BLOOM and MPT), else 0; ggml
//                  forms the slopes as powf(m0, h + 1) and powf(m1, 2(h - n_head_log2) + 1), m0 =
//                  powf(2, -max_bias/n_head_log2) (ggml_compute_forward_soft_max_f32 and the
//                  flash kernel): posenc's slopes (SPEC.md 2.5) with float error.
//   kq_scale       1.0f/sqrtf(float(head_dim)) (llama.cpp's default); a given scale or denominator:
//                  the binary64 scale rounded to float.
//   GQA            ggml broadcasts: query head h reads KV head h / (H / G), posenc's grouping.
// O comes back as float32 [value_dim, heads, queries] (rounded to f16 for f16 storage); neither
// path exposes L, so lse is left untouched (O judged alone). Unsupported: rope_table_given (llama.cpp
// computes its own rotation), an ALiBi with n_heads other than the query heads.
//
// The angle: theta starts at (float)position and is multiplied by theta_scale once per pair
// (ggml_rope_cache_init, ggml-cpu/ops.cpp), all in float32: the working format is binary32 and the
// frequencies are a recurrence, which SPEC.md section 5 ("What standard covers") does not cover.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <limits>
#include <vector>

#include "ggml-cpu.h"
#include "ggml.h"
#include "posenc/plugin.h"

namespace {

posenc_plugin_info info = {POSENC_PLUGIN_ABI_VERSION,
                                 "llama.cpp ggml CPU RoPE",
                                 "llama-cpp-python 0.3.36 (ggml 0.25.3)",
                                 POSENC_CAP_ROPE | POSENC_CAP_ATTENTION,
                                 {POSENC_WORKING_F32, POSENC_WORKING_F32, POSENC_WORKING_F32, POSENC_WORKING_F32},
                                 {POSENC_ROUNDING_NONE, POSENC_ROUNDING_NONE, POSENC_ROUNDING_NONE, POSENC_ROUNDING_NONE},
                                 {POSENC_ROUNDING_NONE, POSENC_ROUNDING_NONE, POSENC_ROUNDING_NONE, POSENC_ROUNDING_NONE}};

bool finite_positive(double v) { return v > 0 && std::isfinite(v); }

bool fits_float(double v) { return std::fabs(v) <= std::numeric_limits<float>::max(); }

// ggml's arguments for one call, or the status that refuses it.
struct GgmlRope {
  int n_dims = 0, mode = GGML_ROPE_TYPE_NORMAL, n_ctx_orig = 0;
  float freq_base = 0, freq_scale = 1, ext_factor = 0, attn_factor = 1, beta_fast = 0, beta_slow = 0;
  bool multi = false;
  int sections[GGML_MROPE_SECTIONS] = {0, 0, 0, 0};
  std::vector<float> freq_factors;  // empty: none
};

// YaRN's attention factor m as posenc defines it (SPEC.md 2.4): g(s, mu) = 1 for s <= 1, else
// mu ln(s)/10 + 1.
double yarn_g(double s, double mu) { return s <= 1 ? 1.0 : mu * std::log(s) / 10 + 1; }

posenc_status map_yarn(const posenc_rope_scaling& s, GgmlRope& g) {
  const uint32_t allowed = POSENC_FIELD_FACTOR | POSENC_FIELD_ORIGINAL_MAX_POSITIONS | POSENC_FIELD_BETA_FAST |
                           POSENC_FIELD_BETA_SLOW | POSENC_FIELD_TRUNCATE | POSENC_FIELD_MSCALE |
                           POSENC_FIELD_MSCALE_ALL_DIM | POSENC_FIELD_ATTENTION_FACTOR;
  if ((s.fields & ~allowed) || !(s.fields & POSENC_FIELD_FACTOR) || !finite_positive(s.factor) ||
      !(s.fields & POSENC_FIELD_ORIGINAL_MAX_POSITIONS) || s.original_max_positions < 1)
    return POSENC_INVALID_PARAMETERS;
  const double beta_fast = s.fields & POSENC_FIELD_BETA_FAST ? s.beta_fast : 32.0;
  const double beta_slow = s.fields & POSENC_FIELD_BETA_SLOW ? s.beta_slow : 1.0;
  if (!finite_positive(beta_fast) || !finite_positive(beta_slow) || beta_fast < beta_slow)
    return POSENC_INVALID_PARAMETERS;
  if ((s.fields & POSENC_FIELD_MSCALE) && !finite_positive(s.mscale)) return POSENC_INVALID_PARAMETERS;
  if ((s.fields & POSENC_FIELD_MSCALE_ALL_DIM) && !finite_positive(s.mscale_all_dim)) return POSENC_INVALID_PARAMETERS;
  if ((s.fields & POSENC_FIELD_ATTENTION_FACTOR) && !finite_positive(s.attention_factor))
    return POSENC_INVALID_PARAMETERS;
  if ((s.fields & POSENC_FIELD_TRUNCATE) && !s.truncate) return POSENC_UNSUPPORTED;
  if (s.original_max_positions > std::numeric_limits<int>::max() || !fits_float(s.factor) || !fits_float(beta_fast) ||
      !fits_float(beta_slow))
    return POSENC_UNSUPPORTED;
  g.n_ctx_orig = static_cast<int>(s.original_max_positions);
  g.freq_scale = 1.0f / static_cast<float>(s.factor);
  g.ext_factor = 1.0f;
  g.beta_fast = static_cast<float>(beta_fast);
  g.beta_slow = static_cast<float>(beta_slow);
  double m = yarn_g(s.factor, 1.0);
  if (s.fields & POSENC_FIELD_ATTENTION_FACTOR)
    m = s.attention_factor;
  else if ((s.fields & POSENC_FIELD_MSCALE) && (s.fields & POSENC_FIELD_MSCALE_ALL_DIM))
    m = yarn_g(s.factor, s.mscale) / yarn_g(s.factor, s.mscale_all_dim);
  const float factor = 1.0f / g.freq_scale;
  g.attn_factor = static_cast<float>(m) * (1.0f / (1.0f + 0.1f * std::log(factor)));
  return POSENC_OK;
}

posenc_status map_longrope(const posenc_rope_params& p, GgmlRope& g) {
  const posenc_rope_scaling& s = p.scaling;
  const uint32_t required = POSENC_FIELD_FACTOR | POSENC_FIELD_ORIGINAL_MAX_POSITIONS | POSENC_FIELD_SEQ_LEN;
  if ((s.fields & ~(required | POSENC_FIELD_ATTENTION_FACTOR)) || (s.fields & required) != required ||
      !finite_positive(s.factor) || s.original_max_positions < 2)
    return POSENC_INVALID_PARAMETERS;
  const int64_t n = p.rotary_dim / 2;
  if (s.n_short_factor != n || s.n_long_factor != n || !s.short_factor || !s.long_factor)
    return POSENC_INVALID_PARAMETERS;
  if ((s.fields & POSENC_FIELD_ATTENTION_FACTOR) && !finite_positive(s.attention_factor))
    return POSENC_INVALID_PARAMETERS;
  const double* e = s.seq_len > s.original_max_positions ? s.long_factor : s.short_factor;
  for (int64_t i = 0; i < n; ++i) {
    if (!finite_positive(s.short_factor[i]) || !finite_positive(s.long_factor[i])) return POSENC_INVALID_PARAMETERS;
    if (!fits_float(e[i])) return POSENC_UNSUPPORTED;
    g.freq_factors.push_back(static_cast<float>(e[i]));
  }
  const double m = s.fields & POSENC_FIELD_ATTENTION_FACTOR ? s.attention_factor
                   : s.factor <= 1 ? 1.0
                                   : std::sqrt(1 + std::log(s.factor) / std::log(static_cast<double>(s.original_max_positions)));
  g.attn_factor = static_cast<float>(m);
  return POSENC_OK;
}

posenc_status map_params(const posenc_rope_params* p, GgmlRope& g) {
  if (!p) return POSENC_INVALID_PARAMETERS;
  if (p->head_dim < 2 || p->head_dim > 65536 || p->head_dim % 2 || p->rotary_dim < 2 || p->rotary_dim % 2 ||
      p->rotary_dim > p->head_dim)
    return POSENC_INVALID_PARAMETERS;
  if (!(p->base > 1) || !std::isfinite(p->base) || (p->layout != 0 && p->layout != 1) ||
      (p->partial != 0 && p->partial != 1) || p->n_axes < 1 || p->n_axes > 4)
    return POSENC_INVALID_PARAMETERS;
  if (p->n_axes > 1) {
    int64_t sum = 0;
    for (int a = 0; a < p->n_axes; ++a) {
      if (p->mrope_section[a] < 1) return POSENC_INVALID_PARAMETERS;
      sum += p->mrope_section[a];
    }
    if (sum != p->rotary_dim / 2 || p->partial == 1) return POSENC_INVALID_PARAMETERS;
    if (p->layout == 0) return POSENC_UNSUPPORTED;  // GGML_ROPE_TYPE_MROPE has NEOX ordering only
    g.multi = true;
    for (int a = 0; a < p->n_axes; ++a) g.sections[a] = static_cast<int>(p->mrope_section[a]);
  }
  if (p->partial == 1) return POSENC_UNSUPPORTED;
  if (!fits_float(p->base)) return POSENC_UNSUPPORTED;
  g.n_dims = static_cast<int>(p->rotary_dim);
  g.mode = g.multi ? GGML_ROPE_TYPE_MROPE : p->layout == 0 ? GGML_ROPE_TYPE_NORMAL : GGML_ROPE_TYPE_NEOX;
  g.freq_base = static_cast<float>(p->base);
  const posenc_rope_scaling& s = p->scaling;
  switch (s.kind) {
    case POSENC_SCALING_NONE:
      return s.fields ? POSENC_INVALID_PARAMETERS : POSENC_OK;
    case POSENC_SCALING_LINEAR:
      if (s.fields != POSENC_FIELD_FACTOR || !finite_positive(s.factor)) return POSENC_INVALID_PARAMETERS;
      if (!fits_float(s.factor)) return POSENC_UNSUPPORTED;
      g.freq_scale = 1.0f / static_cast<float>(s.factor);
      return POSENC_OK;
    case POSENC_SCALING_YARN:
      return map_yarn(s, g);
    case POSENC_SCALING_LONGROPE:
      return map_longrope(*p, g);
    case POSENC_SCALING_NTK:
    case POSENC_SCALING_DYNAMIC:
    case POSENC_SCALING_LLAMA3:
      return POSENC_UNSUPPORTED;
    default:
      return POSENC_INVALID_PARAMETERS;
  }
}

std::size_t element_size(posenc_dtype t) { return t == POSENC_F32 ? sizeof(float) : sizeof(ggml_fp16_t); }

// ggml reports through its log callback (and never otherwise on the paths the checks above
// leave open); the plugin must print nothing.
void silent(ggml_log_level, const char*, void*) {}


// The attention mode (POSENC_LLAMACPP_ATTENTION, the header comment): flash or soft_max, and the
// KV cache's type.
struct AttentionMode {
  bool flash = true;
  ggml_type kv = GGML_TYPE_F16;
  bool valid = true;
};

AttentionMode attention_mode() {
  const char* env = std::getenv("POSENC_LLAMACPP_ATTENTION");
  const std::string m = env ? env : "flash-kvf16";
  AttentionMode mode;
  if (m == "flash-kvf16") return mode;
  if (m == "flash-kvf32") return {true, GGML_TYPE_F32, true};
  if (m == "softmax-kvf16") return {false, GGML_TYPE_F16, true};
  if (m == "softmax-kvf32") return {false, GGML_TYPE_F32, true};
  return {true, GGML_TYPE_F16, false};
}

float load(const void* base, int64_t index, posenc_dtype dtype) {
  if (dtype == POSENC_F32) return static_cast<const float*>(base)[index];
  return ggml_fp16_to_fp32(static_cast<const ggml_fp16_t*>(base)[index]);
}

// A [dim, heads, tokens] float32 tensor filled from a strided posenc input.
ggml_tensor* strided_input(ggml_context* ctx, const void* x, posenc_dtype dtype, int64_t dim, int64_t heads,
                           int64_t tokens, int64_t token_stride, int64_t head_stride) {
  ggml_tensor* t = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, dim, heads, tokens);
  auto* out = static_cast<float*>(t->data);
  for (int64_t i = 0; i < tokens; ++i)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t c = 0; c < dim; ++c)
        out[(i * heads + h) * dim + c] = load(x, i * token_stride + h * head_stride + c, dtype);
  return t;
}

ggml_tensor* rope(ggml_context* ctx, ggml_tensor* x, const GgmlRope& g, const int64_t* positions, int64_t tokens,
                  int64_t axes, ggml_tensor* factors) {
  const std::size_t count = static_cast<std::size_t>(tokens) * (g.multi ? GGML_MROPE_SECTIONS : 1);
  ggml_tensor* b = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, static_cast<int64_t>(count));
  auto* pos = static_cast<int32_t*>(b->data);
  for (std::size_t i = 0; i < count; ++i) pos[i] = 0;
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t ax = 0; ax < axes; ++ax)
      pos[static_cast<std::size_t>(t + ax * tokens)] = static_cast<int32_t>(positions[t * axes + ax]);
  if (g.multi)
    return ggml_rope_multi(ctx, x, b, factors, g.n_dims, const_cast<int*>(g.sections), g.mode, g.n_ctx_orig,
                           g.freq_base, g.freq_scale, g.ext_factor, g.attn_factor, g.beta_fast, g.beta_slow);
  return ggml_rope_ext(ctx, x, b, factors, g.n_dims, g.mode, g.n_ctx_orig, g.freq_base, g.freq_scale, g.ext_factor,
                       g.attn_factor, g.beta_fast, g.beta_slow);
}

// The mask's visible entries and llama.cpp's value there: 0, or -|p_i - p_j| with ALiBi.
bool fill_mask(ggml_tensor* m, const posenc_attention_params& p, int64_t nq, int64_t nk, const int64_t* qpos,
               const int64_t* kpos, int64_t axes, const uint8_t* explicit_mask) {
  for (int64_t i = 0; i < nq; ++i)
    for (int64_t j = 0; j < nk; ++j) {
      bool visible = true;
      if (p.mask == POSENC_MASK_CAUSAL) visible = j <= i + (nk - nq);
      if (p.mask == POSENC_MASK_EXPLICIT) visible = explicit_mask[i * nk + j] != 0;
      float value = -INFINITY;
      if (visible) {
        value = 0.0f;
        if (p.alibi) {
          const int64_t distance = std::llabs(qpos[i * axes] - kpos[j * axes]);
          if (m->type == GGML_TYPE_F16 && distance > 2048) return false;
          value = -static_cast<float>(distance);
        }
      }
      if (m->type == GGML_TYPE_F16)
        static_cast<ggml_fp16_t*>(m->data)[i * nk + j] = ggml_fp32_to_fp16(value);
      else
        static_cast<float*>(m->data)[i * nk + j] = value;
    }
  return true;
}

}  // namespace

extern "C" {

const posenc_plugin_info* posenc_plugin_query(void) {
  // The soft_max path with an f16 V multiplies P, converted to f16 (ggml_mul_mat's src1 to V's
  // vec_dot_type), by V: P is rounded to f16 in every storage format.
  const AttentionMode mode = attention_mode();
  const int32_t p = !mode.flash && mode.kv == GGML_TYPE_F16 ? POSENC_ROUNDING_F16 : POSENC_ROUNDING_NONE;
  for (int i = 0; i < 4; ++i) info.probability_format[i] = p;
  return &info;
}

posenc_status posenc_attention(const posenc_attention_params* p, posenc_dtype dtype, int64_t nq, int64_t nk,
                               const int64_t* query_positions, const int64_t* key_positions, const void* q,
                               int64_t q_token_stride, int64_t q_head_stride, const void* k, int64_t k_token_stride,
                               int64_t k_head_stride, const void* v, int64_t v_token_stride, int64_t v_head_stride,
                               const uint8_t* mask, const void* table, void* o, int64_t o_token_stride,
                               int64_t o_head_stride, void* /*lse*/, int64_t /*lse_token_stride*/,
                               int64_t /*lse_head_stride*/) {
  if (!p || (dtype != POSENC_F64 && dtype != POSENC_F32 && dtype != POSENC_BF16 && dtype != POSENC_F16))
    return POSENC_INVALID_PARAMETERS;
  const AttentionMode mode = attention_mode();
  if (!mode.valid) return POSENC_UNSUPPORTED;
  const int64_t d = p->head_dim, dv = p->value_dim, H = p->query_heads, G = p->kv_heads;
  if (d < 1 || dv < 1 || H < 1 || G < 1 || H % G || nq < 1 || nk < 1) return POSENC_INVALID_PARAMETERS;
  if (p->mask == POSENC_MASK_CAUSAL && nq > nk) return POSENC_INVALID_PARAMETERS;
  if (p->mask == POSENC_MASK_EXPLICIT && !mask) return POSENC_INVALID_PARAMETERS;
  if (p->rope_table_given || table) return POSENC_UNSUPPORTED;
  if (p->alibi && p->alibi->n_heads != H) return POSENC_UNSUPPORTED;
  GgmlRope g;
  if (p->rope) {
    const posenc_status status = map_params(p->rope, g);
    if (status != POSENC_OK) return status;
    if (p->rope->inverse) return POSENC_UNSUPPORTED;
  }
  if (dtype != POSENC_F32 && dtype != POSENC_F16) return POSENC_UNSUPPORTED;
  if (nq > std::numeric_limits<int32_t>::max() / 4 || nk > std::numeric_limits<int32_t>::max() / 4)
    return POSENC_UNSUPPORTED;
  const int64_t axes = p->rope ? p->rope->n_axes : 1;
  if (p->rope)
    for (int64_t i = 0; i < nq * axes; ++i)
      if (query_positions[i] < std::numeric_limits<int32_t>::min() || query_positions[i] > std::numeric_limits<int32_t>::max())
        return POSENC_UNSUPPORTED;
  if (p->rope)
    for (int64_t i = 0; i < nk * axes; ++i)
      if (key_positions[i] < std::numeric_limits<int32_t>::min() || key_positions[i] > std::numeric_limits<int32_t>::max())
        return POSENC_UNSUPPORTED;
  const bool defaults = !(p->scale_fields & (POSENC_SCALE_GIVEN | POSENC_SCALE_DENOMINATOR | POSENC_SCALE_MSCALE_ALL_DIM));
  const float kq_scale = defaults ? 1.0f / std::sqrt(static_cast<float>(d)) : static_cast<float>(p->scale);
  const float max_bias = p->alibi ? 8.0f : 0.0f;

  // Every tensor of the graph in float32 at most, a few times over, plus the work buffer (f16
  // conversions of q and P, the flash kernel's per-thread rows) and the graph.
  const std::size_t elements = static_cast<std::size_t>(nq * H * (d + dv) + nk * G * (d + dv) + nq * nk * (H + 1));
  const std::size_t mem = 8 * elements * sizeof(float) + 64 * ggml_tensor_overhead() + ggml_graph_overhead() +
                          static_cast<std::size_t>(4 * (d + dv) + 64) * sizeof(float) * 4 + (1u << 20);
  ggml_log_set(silent, nullptr);
  ggml_cpu_init();
  ggml_init_params params = {mem, nullptr, false};
  ggml_context* ctx = ggml_init(params);
  if (!ctx) return POSENC_UNSUPPORTED;
  ggml_tensor* tq = strided_input(ctx, q, dtype, d, H, nq, q_token_stride, q_head_stride);
  ggml_tensor* tk = strided_input(ctx, k, dtype, d, G, nk, k_token_stride, k_head_stride);
  ggml_tensor* tv = strided_input(ctx, v, dtype, dv, G, nk, v_token_stride, v_head_stride);
  if (p->rope) {
    ggml_tensor* factors = nullptr;
    if (!g.freq_factors.empty()) {
      factors = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, static_cast<int64_t>(g.freq_factors.size()));
      std::memcpy(factors->data, g.freq_factors.data(), g.freq_factors.size() * sizeof(float));
    }
    tq = rope(ctx, tq, g, query_positions, nq, axes, factors);
    tk = rope(ctx, tk, g, key_positions, nk, axes, factors);
  }
  // The cache: k and v stored in the KV type.
  tk = ggml_cpy(ctx, tk, ggml_new_tensor_3d(ctx, mode.kv, d, G, nk));
  tv = ggml_cpy(ctx, tv, ggml_new_tensor_3d(ctx, mode.kv, dv, G, nk));
  ggml_tensor* qp = ggml_permute(ctx, tq, 0, 2, 1, 3);  // [d, nq, H]
  ggml_tensor* kp = ggml_permute(ctx, tk, 0, 2, 1, 3);  // [d, nk, G]
  ggml_tensor* m = ggml_new_tensor_2d(ctx, mode.flash ? GGML_TYPE_F16 : GGML_TYPE_F32, nk, nq);
  if (!fill_mask(m, *p, nq, nk, query_positions, key_positions, axes, mask)) {
    ggml_free(ctx);
    return POSENC_UNSUPPORTED;
  }
  ggml_tensor* out = nullptr;  // [dv, H, nq], contiguous
  if (mode.flash) {
    ggml_tensor* vp = ggml_permute(ctx, tv, 0, 2, 1, 3);  // [dv, nk, G]
    out = ggml_flash_attn_ext(ctx, qp, kp, vp, m, kq_scale, max_bias, 0.0f);
  } else {
    ggml_tensor* kq = ggml_soft_max_ext(ctx, ggml_mul_mat(ctx, kp, qp), m, kq_scale, max_bias);  // [nk, nq, H]
    // llama.cpp keeps V transposed in the cache without flash attention: [nk, dv, G].
    ggml_tensor* vt = ggml_cont(ctx, ggml_permute(ctx, tv, 1, 2, 0, 3));
    ggml_tensor* kqv = ggml_mul_mat(ctx, vt, kq);  // [dv, nq, H]
    out = ggml_cont(ctx, ggml_permute(ctx, kqv, 0, 2, 1, 3));
  }
  ggml_cgraph* graph = ggml_new_graph(ctx);
  ggml_build_forward_expand(graph, out);
  if (ggml_graph_compute_with_ctx(ctx, graph, 1) != GGML_STATUS_SUCCESS) {
    ggml_free(ctx);
    return POSENC_UNSUPPORTED;
  }
  const auto* r = static_cast<const float*>(out->data);
  for (int64_t i = 0; i < nq; ++i)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t c = 0; c < dv; ++c) {
        const float value = r[(i * H + h) * dv + c];
        const int64_t at = i * o_token_stride + h * o_head_stride + c;
        if (dtype == POSENC_F32)
          static_cast<float*>(o)[at] = value;
        else
          static_cast<ggml_fp16_t*>(o)[at] = ggml_fp32_to_fp16(value);
      }
  ggml_free(ctx);
  return POSENC_OK;
}

posenc_status posenc_rope_apply(const posenc_rope_params* p, posenc_dtype dtype, int64_t n_tokens, int64_t n_heads,
                                const int64_t* positions, const void* x, int64_t x_token_stride, int64_t x_head_stride,
                                void* y, int64_t y_token_stride, int64_t y_head_stride) {
  if (dtype != POSENC_F64 && dtype != POSENC_F32 && dtype != POSENC_BF16 && dtype != POSENC_F16)
    return POSENC_INVALID_PARAMETERS;
  GgmlRope g;
  const posenc_status status = map_params(p, g);
  if (status != POSENC_OK) return status;
  if (dtype != POSENC_F32 && dtype != POSENC_F16) return POSENC_UNSUPPORTED;
  if (n_tokens < 0 || n_heads < 1) return POSENC_INVALID_PARAMETERS;  // as the reference plugin
  if (n_tokens == 0) return POSENC_OK;
  if (n_tokens > std::numeric_limits<int32_t>::max() / 4 || n_heads > std::numeric_limits<int32_t>::max())
    return POSENC_UNSUPPORTED;
  const int64_t axes = p->n_axes;
  for (int64_t i = 0; i < n_tokens * axes; ++i)
    if (positions[i] < std::numeric_limits<int32_t>::min() || positions[i] > std::numeric_limits<int32_t>::max())
      return POSENC_UNSUPPORTED;

  const int64_t d = p->head_dim;
  const std::size_t es = element_size(dtype), row = static_cast<std::size_t>(d) * es;
  const std::size_t data = row * static_cast<std::size_t>(n_heads * n_tokens);
  const std::size_t pos_count = static_cast<std::size_t>(n_tokens) * (g.multi ? GGML_MROPE_SECTIONS : 1);
  // Two tensors of x's size (input, result), positions, factors, the graph and the one-thread work buffer.
  const std::size_t mem = 2 * data + pos_count * 4 + g.freq_factors.size() * 4 + 16 * ggml_tensor_overhead() +
                          ggml_graph_overhead() + static_cast<std::size_t>(d + 64) * 4 + (1u << 16);
  ggml_log_set(silent, nullptr);
  ggml_cpu_init();
  ggml_init_params params = {mem, nullptr, false};
  ggml_context* ctx = ggml_init(params);
  if (!ctx) return POSENC_UNSUPPORTED;
  const ggml_type type = dtype == POSENC_F32 ? GGML_TYPE_F32 : GGML_TYPE_F16;
  ggml_tensor* a = ggml_new_tensor_3d(ctx, type, d, n_heads, n_tokens);
  for (int64_t t = 0; t < n_tokens; ++t)
    for (int64_t h = 0; h < n_heads; ++h)
      std::memcpy(static_cast<char*>(a->data) + static_cast<std::size_t>(t * n_heads + h) * row,
                  static_cast<const char*>(x) + static_cast<std::size_t>(t * x_token_stride + h * x_head_stride) * es,
                  row);
  ggml_tensor* b = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, static_cast<int64_t>(pos_count));
  auto* pos = static_cast<int32_t*>(b->data);
  // ggml_rope_multi reads axis a of token t at pos[t + a*n_tokens] (ggml_compute_forward_rope_flt).
  for (std::size_t i = 0; i < pos_count; ++i) pos[i] = 0;
  for (int64_t t = 0; t < n_tokens; ++t)
    for (int64_t ax = 0; ax < axes; ++ax)
      pos[static_cast<std::size_t>(t + ax * n_tokens)] = static_cast<int32_t>(positions[t * axes + ax]);
  ggml_tensor* c = nullptr;
  if (!g.freq_factors.empty()) {
    c = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, static_cast<int64_t>(g.freq_factors.size()));
    std::memcpy(c->data, g.freq_factors.data(), g.freq_factors.size() * sizeof(float));
  }
  ggml_tensor* r = nullptr;
  if (g.multi)
    r = (p->inverse ? ggml_rope_multi_back : ggml_rope_multi)(ctx, a, b, c, g.n_dims, g.sections, g.mode, g.n_ctx_orig,
                                                               g.freq_base, g.freq_scale, g.ext_factor, g.attn_factor,
                                                               g.beta_fast, g.beta_slow);
  else
    r = (p->inverse ? ggml_rope_ext_back : ggml_rope_ext)(ctx, a, b, c, g.n_dims, g.mode, g.n_ctx_orig, g.freq_base,
                                                           g.freq_scale, g.ext_factor, g.attn_factor, g.beta_fast,
                                                           g.beta_slow);
  ggml_cgraph* graph = ggml_new_graph(ctx);
  ggml_build_forward_expand(graph, r);
  if (ggml_graph_compute_with_ctx(ctx, graph, 1) != GGML_STATUS_SUCCESS) {
    ggml_free(ctx);
    return POSENC_UNSUPPORTED;
  }
  for (int64_t t = 0; t < n_tokens; ++t)
    for (int64_t h = 0; h < n_heads; ++h)
      std::memcpy(static_cast<char*>(y) + static_cast<std::size_t>(t * y_token_stride + h * y_head_stride) * es,
                  static_cast<const char*>(r->data) + static_cast<std::size_t>(t * n_heads + h) * row, row);
  ggml_free(ctx);
  return POSENC_OK;
}

}  // extern "C"
