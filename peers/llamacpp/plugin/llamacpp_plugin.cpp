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
// The angle: theta starts at (float)position and is multiplied by theta_scale once per pair
// (ggml_rope_cache_init, ggml-cpu/ops.cpp), all in float32: the working format is binary32 and the
// frequencies are a recurrence, which SPEC.md section 5 ("What standard covers") does not cover.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "ggml-cpu.h"
#include "ggml.h"
#include "posenc/plugin.h"

namespace {

const posenc_plugin_info info = {POSENC_PLUGIN_ABI_VERSION,
                                 "llama.cpp ggml CPU RoPE",
                                 "llama-cpp-python 0.3.36 (ggml 0.25.3)",
                                 POSENC_CAP_ROPE,
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

}  // namespace

extern "C" {

const posenc_plugin_info* posenc_plugin_query(void) { return &info; }

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
