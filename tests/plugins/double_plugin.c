/* A straightforward binary64 implementation of part of the posenc plugin ABI (RoPE without
 * scaling, with linear or YaRN scaling; sinusoidal tables, ALiBi, learned lookups), written the way a
 * third party would, in plain C99. Compiled as is it must pass `standard`; compiled with one of
 * the MUTANT_* or HOSTILE_* macros it is a deliberately wrong implementation the suite must reject.
 * With F32_ROPE_ONLY it exports rope_apply alone and answers it in f32 only (POSENC_UNSUPPORTED in
 * any other dtype): a float32 kernel, which gets the RoPE properties in f32. With WITH_LLAMA3 it
 * also answers Llama 3's scaling (a model's vectors, `posenc generate --hf-config`).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "posenc/plugin.h"

#ifdef HOSTILE_HANG
static volatile int forever = 1;
#endif

/* The working format it declares, the same for every storage format (posenc_dtype order): binary64,
 * or binary32 for the mutants that form their angles there. WORKING_FORMAT_CODE overrides it
 * (a code plugin.h does not define: the suite must refuse the plugin). */
#if defined(MUTANT_FLOAT_ANGLE) || defined(MUTANT_BF16_ANGLE) || defined(MUTANT_ITERATIVE_THETA)
#define WORKING POSENC_WORKING_F32
#elif defined(MUTANT_UNROTATED) || defined(MUTANT_SIGN_FLIP)
#define WORKING POSENC_WORKING_DEFAULT /* the loosest standard allows: binary32 for 16-bit outputs */
#elif defined(WORKING_FORMAT_CODE)
#define WORKING WORKING_FORMAT_CODE
#else
#define WORKING POSENC_WORKING_F64
#endif

#ifdef ABI_VERSION_1
/* A plugin built against version 1 of plugin.h: its info ends after capabilities. */
typedef struct {
  uint32_t abi_version;
  const char* name;
  const char* version;
  uint32_t capabilities;
} info_v1;
static const info_v1 info_1 = {1, PLUGIN_NAME, "1", POSENC_CAP_ROPE | POSENC_CAP_SINUSOIDAL | POSENC_CAP_ALIBI | POSENC_CAP_LEARNED};
const posenc_plugin_info* posenc_plugin_query(void) { return (const posenc_plugin_info*)(const void*)&info_1; }
#else
static const posenc_plugin_info info = {POSENC_PLUGIN_ABI_VERSION, PLUGIN_NAME, "1",
                                        POSENC_CAP_ROPE | POSENC_CAP_SINUSOIDAL | POSENC_CAP_ALIBI | POSENC_CAP_LEARNED,
                                        {WORKING, WORKING, WORKING, WORKING},
                                        {POSENC_ROUNDING_NONE, POSENC_ROUNDING_NONE, POSENC_ROUNDING_NONE,
                                         POSENC_ROUNDING_NONE},
                                        {POSENC_ROUNDING_NONE, POSENC_ROUNDING_NONE, POSENC_ROUNDING_NONE,
                                         POSENC_ROUNDING_NONE}};

const posenc_plugin_info* posenc_plugin_query(void) { return &info; }
#endif

static size_t element_size(posenc_dtype t) { return t == POSENC_F64 ? 8 : t == POSENC_F32 ? 4 : 2; }

static uint16_t to_bf16(double v) {
  float f = (float)v;
  uint32_t b;
  memcpy(&b, &f, 4);
  if ((b & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((b >> 16) | 0x40); /* NaN stays NaN */
  b += 0x7fffu + ((b >> 16) & 1u);
  return (uint16_t)(b >> 16);
}

static double from_bf16(uint16_t h) {
  uint32_t b = (uint32_t)h << 16;
  float f;
  memcpy(&f, &b, 4);
  return f;
}

static void put(void* out, posenc_dtype t, size_t i, double v) {
  unsigned char* p = (unsigned char*)out + i * element_size(t);
  if (t == POSENC_F64) {
    memcpy(p, &v, 8);
  } else if (t == POSENC_F32) {
    float f = (float)v;
    memcpy(p, &f, 4);
  } else if (t == POSENC_BF16) {
    uint16_t h = to_bf16(v);
    memcpy(p, &h, 2);
  } else {
    _Float16 h = (_Float16)v;
    memcpy(p, &h, 2);
  }
}

static double get(const void* in, posenc_dtype t, size_t i) {
  const unsigned char* p = (const unsigned char*)in + i * element_size(t);
  if (t == POSENC_F64) {
    double v;
    memcpy(&v, p, 8);
    return v;
  }
  if (t == POSENC_F32) {
    float f;
    memcpy(&f, p, 4);
    return f;
  }
  if (t == POSENC_BF16) {
    uint16_t h;
    memcpy(&h, p, 2);
    return from_bf16(h);
  }
  _Float16 h;
  memcpy(&h, p, 2);
  return (double)h;
}

static int valid_dtype(posenc_dtype t) { return t >= POSENC_F64 && t <= POSENC_F16; }

/* RoPE: what this plugin supports, and the validation a careful implementation does. */
static int positive(double v) { return v > 0 && isfinite(v); }

static posenc_status check_rope(const posenc_rope_params* p) {
  const posenc_rope_scaling* s = &p->scaling;
#ifdef WITH_LLAMA3
  if (s->kind == POSENC_SCALING_LLAMA3) {
    const uint32_t fields = POSENC_FIELD_FACTOR | POSENC_FIELD_ORIGINAL_MAX_POSITIONS | POSENC_FIELD_LOW_FREQ_FACTOR |
                            POSENC_FIELD_HIGH_FREQ_FACTOR;
    if (s->fields != fields || !positive(s->factor) || s->original_max_positions < 1 || !positive(s->low_freq_factor) ||
        !(s->high_freq_factor >= s->low_freq_factor) || !isfinite(s->high_freq_factor))
      return POSENC_INVALID_PARAMETERS;
  } else
#endif
  if (s->kind != POSENC_SCALING_NONE && s->kind != POSENC_SCALING_LINEAR && s->kind != POSENC_SCALING_YARN)
    return POSENC_UNSUPPORTED;
  if (p->partial != 0 || p->n_axes > 1) return POSENC_UNSUPPORTED;
  if (p->head_dim < 2 || p->head_dim % 2 || p->rotary_dim < 2 || p->rotary_dim % 2 || p->rotary_dim > p->head_dim)
    return POSENC_INVALID_PARAMETERS;
  if (!(p->base > 1) || !isfinite(p->base)) return POSENC_INVALID_PARAMETERS;
  if (s->kind == POSENC_SCALING_NONE && s->fields) return POSENC_INVALID_PARAMETERS;
  if (s->kind == POSENC_SCALING_LINEAR && (s->fields != POSENC_FIELD_FACTOR || !positive(s->factor)))
    return POSENC_INVALID_PARAMETERS;
  if (s->kind == POSENC_SCALING_YARN) {
    const uint32_t allowed = POSENC_FIELD_FACTOR | POSENC_FIELD_ORIGINAL_MAX_POSITIONS | POSENC_FIELD_BETA_FAST |
                             POSENC_FIELD_BETA_SLOW | POSENC_FIELD_TRUNCATE | POSENC_FIELD_MSCALE |
                             POSENC_FIELD_MSCALE_ALL_DIM | POSENC_FIELD_ATTENTION_FACTOR;
    if ((s->fields & ~allowed) || !(s->fields & POSENC_FIELD_FACTOR) || !positive(s->factor)) return POSENC_INVALID_PARAMETERS;
    if (!(s->fields & POSENC_FIELD_ORIGINAL_MAX_POSITIONS) || s->original_max_positions < 1) return POSENC_INVALID_PARAMETERS;
    /* Optional fields this plugin does not implement. */
    if (s->fields & (POSENC_FIELD_BETA_FAST | POSENC_FIELD_BETA_SLOW | POSENC_FIELD_TRUNCATE | POSENC_FIELD_MSCALE |
                     POSENC_FIELD_MSCALE_ALL_DIM | POSENC_FIELD_ATTENTION_FACTOR))
      return POSENC_UNSUPPORTED;
  }
  return POSENC_OK;
}

/* YaRN with Hugging Face's defaults (beta_fast 32, beta_slow 1, truncated correction range):
 * _compute_yarn_parameters in transformers' modeling_rope_utils.py. */
static double yarn_correction_dim(double rotations, double dim, double base, double original) {
  return dim * log(original / (rotations * 2 * 3.14159265358979323846)) / (2 * log(base));
}

static double yarn_inv_freq(const posenc_rope_params* p, int64_t i) {
  const double dim = (double)p->rotary_dim, extrapolation = pow(p->base, -2.0 * (double)i / dim);
  const double interpolation = extrapolation / p->scaling.factor;
  double low = floor(yarn_correction_dim(32, dim, p->base, (double)p->scaling.original_max_positions));
  double high = ceil(yarn_correction_dim(1, dim, p->base, (double)p->scaling.original_max_positions));
  if (low < 0) low = 0;
  if (high > dim - 1) high = dim - 1;
  if (low == high) high += 0.001;
  double ramp = ((double)i - low) / (high - low);
  ramp = ramp < 0 ? 0 : ramp > 1 ? 1 : ramp;
  const double keep = 1 - ramp; /* share of the extrapolated (unscaled) frequency */
  return interpolation * (1 - keep) + extrapolation * keep;
}

#ifdef WITH_LLAMA3
/* Llama 3 (transformers' _compute_llama3_parameters): the default frequency where its wavelength
 * is below L0/high_freq_factor, divided by the factor past L0/low_freq_factor, blended between. */
static double llama3_inv_freq(const posenc_rope_params* p, double inv_freq) {
  const posenc_rope_scaling* s = &p->scaling;
  const double original = (double)s->original_max_positions, wavelen = 2 * 3.14159265358979323846 / inv_freq;
  if (wavelen < original / s->high_freq_factor) return inv_freq;
  if (wavelen > original / s->low_freq_factor) return inv_freq / s->factor;
  if (s->high_freq_factor == s->low_freq_factor) return inv_freq; /* no medium band (SPEC.md 2.4) */
  const double smooth = (original / wavelen - s->low_freq_factor) / (s->high_freq_factor - s->low_freq_factor);
  return (1 - smooth) * inv_freq / s->factor + smooth * inv_freq;
}
#endif

static double attention_factor(const posenc_rope_params* p) {
  if (p->scaling.kind != POSENC_SCALING_YARN || p->scaling.factor <= 1) return 1.0;
#ifdef MUTANT_YARN_NO_ATTENTION
  return 1.0;
#endif
  return 0.1 * log(p->scaling.factor) + 1.0;
}

static double angle(const posenc_rope_params* p, int64_t position, int64_t i) {
  double pos = (double)position;
#ifdef MUTANT_OFF_BY_ONE
  pos += 1;
#endif
  if (p->scaling.kind == POSENC_SCALING_YARN) return pos * yarn_inv_freq(p, i);
  double factor = p->scaling.kind == POSENC_SCALING_LINEAR ? p->scaling.factor : 1.0;
#if defined(MUTANT_FLOAT_ANGLE) || defined(MUTANT_BF16_ANGLE)
  /* Hugging Face style: inv_freq and the angle in binary32. */
  float inv_freq = 1.0f / powf((float)p->base, (float)(2 * i) / (float)p->rotary_dim) / (float)factor;
#ifdef WITH_LLAMA3
  if (p->scaling.kind == POSENC_SCALING_LLAMA3) inv_freq = (float)llama3_inv_freq(p, inv_freq);
#endif
  float a = (float)pos * inv_freq;
#ifdef MUTANT_BF16_ANGLE
  a = (float)from_bf16(to_bf16(a));
#endif
  return a;
#elif defined(MUTANT_ITERATIVE_THETA)
  /* llama.cpp style: theta = pos, then theta *= base^(-2/d) per pair, in binary32. */
  float theta = (float)pos / (float)factor;
  float step = powf((float)p->base, -2.0f / (float)p->rotary_dim);
  for (int64_t k = 0; k < i; ++k) theta *= step;
  return theta;
#else
#ifdef WITH_LLAMA3
  if (p->scaling.kind == POSENC_SCALING_LLAMA3) return pos * llama3_inv_freq(p, pow(p->base, -2.0 * (double)i / (double)p->rotary_dim));
#endif
  return pos * pow(p->base, -2.0 * (double)i / (double)p->rotary_dim) / factor;
#endif
}

posenc_status posenc_rope_apply(const posenc_rope_params* p, posenc_dtype dtype, int64_t n_tokens, int64_t n_heads,
                                const int64_t* positions, const void* x, int64_t x_token_stride, int64_t x_head_stride,
                                void* y, int64_t y_token_stride, int64_t y_head_stride) {
  if (!p || !valid_dtype(dtype)) return POSENC_INVALID_PARAMETERS;
#ifdef F32_ROPE_ONLY
  if (dtype != POSENC_F32) return POSENC_UNSUPPORTED;
#endif
  posenc_status s = check_rope(p);
  if (s != POSENC_OK) return s;
#ifdef HOSTILE_CRASH
  abort();
#endif
#ifdef HOSTILE_HANG
  while (forever) {
  }
#endif
#ifdef HOSTILE_EXIT
  _exit(0);
#endif
#ifdef HOSTILE_BAD_STATUS
  return (posenc_status)42;
#endif
#ifdef HOSTILE_NO_OUTPUT
  return POSENC_OK;
#endif
#ifdef HOSTILE_ALLOC_HOG
  /* Allocates and touches memory until none is left, then gives up. Every block is published
     through a volatile pointer: memory that is never read is dead, and clang removes such a
     malloc and memset, leaving an empty infinite loop that never reaches the limit. */
  static char* volatile last_block;
  for (;;) {
    char* block = malloc((size_t)64 << 20);
    if (!block) abort();
    memset(block, 1, (size_t)64 << 20);
    last_block = block;
  }
  (void)last_block;
#endif
#ifdef HOSTILE_PRINT
  for (int line = 0; line < 200000; ++line) printf("rope debug: token %d of %lld\n", line, (long long)n_tokens);
#endif
#ifdef LONG_CONTEXT_ONLY
  /* Answers only batches with a position of at least 2^24 in magnitude: a verdict on long context alone. */
  int long_context = 0;
  for (int64_t t = 0; t < n_tokens; ++t) long_context |= llabs(positions[t]) >= ((int64_t)1 << 24);
  if (!long_context) return POSENC_UNSUPPORTED;
#endif
  int interleaved = p->layout == 0;
#ifdef MUTANT_SWAP_LAYOUT
  interleaved = !interleaved;
#endif
  int64_t rotated = p->rotary_dim;
#ifdef MUTANT_ROTATE_TAIL
  rotated = p->head_dim;
#endif
  const double m = attention_factor(p);
  for (int64_t t = 0; t < n_tokens; ++t) {
    for (int64_t h = 0; h < n_heads; ++h) {
      const size_t in = (size_t)(t * x_token_stride + h * x_head_stride);
      const size_t out = (size_t)(t * y_token_stride + h * y_head_stride);
      double v[65536];
      for (int64_t j = 0; j < p->head_dim; ++j) v[j] = get(x, dtype, in + (size_t)j);
#ifdef MUTANT_NAN_TO_ZERO
      for (int64_t j = 0; j < p->head_dim; ++j) v[j] = isnan(v[j]) ? 0.0 : v[j]; /* "sanitizes" its input */
#endif
#ifdef HOSTILE_WRITE_INPUT
      put((void*)x, dtype, in, 1.0);
#endif
#ifdef HOSTILE_READ_PAST
      v[0] += 0 * get(x, dtype, in + (size_t)p->head_dim); /* one element past the input */
#endif
      for (int64_t i = 0; i < rotated / 2; ++i) {
        const int64_t a = interleaved ? 2 * i : i, b = interleaved ? 2 * i + 1 : i + rotated / 2;
        double th = angle(p, positions[t], i % (p->rotary_dim / 2));
        if (p->inverse) th = -th;
#ifdef MUTANT_UNROTATED
        th = 0;
#endif
#ifdef MUTANT_SIGN_FLIP
        th = -th;
#endif
        const double c = m * cos(th), sn = m * sin(th), xa = v[a], xb = v[b];
        v[a] = xa * c - xb * sn;
        v[b] = xa * sn + xb * c;
      }
      for (int64_t j = 0; j < p->head_dim; ++j) put(y, dtype, out + (size_t)j, v[j]);
#ifdef HOSTILE_WRITE_PAST
      put(y, dtype, out + (size_t)p->head_dim, 0.0);
#endif
    }
  }
  return POSENC_OK;
}

#ifndef F32_ROPE_ONLY
posenc_status posenc_sinusoidal_table(const posenc_sinusoidal_params* p, posenc_dtype dtype, int64_t n_positions,
                                      const int64_t* positions, void* out) {
  if (!p || !valid_dtype(dtype) || p->d_model < 2 || p->d_model % 2 || !(p->base > 1)) return POSENC_INVALID_PARAMETERS;
  const int64_t half = p->d_model / 2;
  int tensor2tensor = p->frequencies == 1;
#ifdef MUTANT_T2T_AS_PAPER
  tensor2tensor = 1;
#endif
  for (int64_t k = 0; k < n_positions; ++k) {
    if (positions[k] < 0) return POSENC_INVALID_PARAMETERS;
    for (int64_t i = 0; i < half; ++i) {
      const double w = tensor2tensor ? exp(-(double)i * log(p->base) / (double)(half > 1 ? half - 1 : 1))
                                     : pow(p->base, -2.0 * (double)i / (double)p->d_model);
      const double a = (double)positions[k] * w;
      const size_t row = (size_t)(k * p->d_model);
      put(out, dtype, row + (size_t)(p->layout ? i : 2 * i), sin(a));
      put(out, dtype, row + (size_t)(p->layout ? half + i : 2 * i + 1), cos(a));
    }
  }
  return POSENC_OK;
}

static double slope(int64_t n, int64_t h) {
  int64_t m = 1;
  while (m * 2 <= n) m *= 2;
#ifdef MUTANT_ALIBI_POW2
  m = n;
  return pow(2.0, -8.0 * (double)(h + 1) / (double)n);
#endif
  if (h < m) return pow(2.0, -8.0 * (double)(h + 1) / (double)m);
  return pow(2.0, -4.0 * (double)(2 * (h - m) + 1) / (double)m);
}

posenc_status posenc_alibi_slopes(const posenc_alibi_params* p, posenc_dtype dtype, void* out) {
  if (!p || !valid_dtype(dtype) || p->n_heads < 1) return POSENC_INVALID_PARAMETERS;
  for (int64_t h = 0; h < p->n_heads; ++h) put(out, dtype, (size_t)h, slope(p->n_heads, h));
  return POSENC_OK;
}

posenc_status posenc_alibi_bias(const posenc_alibi_params* p, posenc_dtype dtype, int64_t n_queries,
                                const int64_t* query_positions, int64_t n_keys, const int64_t* key_positions,
                                void* out) {
  if (!p || !valid_dtype(dtype) || p->n_heads < 1) return POSENC_INVALID_PARAMETERS;
  for (int64_t i = 0; i < n_queries; ++i) {
    for (int64_t j = 0; j < n_keys; ++j) {
      if (query_positions[i] < 0 || key_positions[j] < 0) return POSENC_INVALID_PARAMETERS;
      if (p->mode == 0 && key_positions[j] > query_positions[i]) return POSENC_INVALID_PARAMETERS;
    }
  }
  size_t k = 0;
  for (int64_t h = 0; h < p->n_heads; ++h) {
    for (int64_t i = 0; i < n_queries; ++i) {
      for (int64_t j = 0; j < n_keys; ++j) {
        double d = (double)(query_positions[i] - key_positions[j]);
        if (p->mode == 1) d = fabs(d);
        put(out, dtype, k++, d == 0 ? 0.0 : -slope(p->n_heads, h) * d);
      }
    }
  }
  return POSENC_OK;
}

posenc_status posenc_learned_lookup(int64_t max_positions, int64_t dim, posenc_dtype dtype, const void* table,
                                    int64_t n_positions, const int64_t* positions, void* out) {
  if (!valid_dtype(dtype) || max_positions < 1 || dim < 1) return POSENC_INVALID_PARAMETERS;
  for (int64_t i = 0; i < n_positions; ++i) {
    int64_t row = positions[i];
#ifdef MUTANT_CLAMP_LEARNED
    if (row < 0) row = 0;
    if (row >= max_positions) row = max_positions - 1;
#endif
    if (row < 0 || row >= max_positions) return POSENC_INVALID_PARAMETERS;
    memcpy((unsigned char*)out + (size_t)(i * dim) * element_size(dtype),
           (const unsigned char*)table + (size_t)(row * dim) * element_size(dtype), (size_t)dim * element_size(dtype));
  }
  return POSENC_OK;
}
#endif /* F32_ROPE_ONLY */
