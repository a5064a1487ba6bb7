/* A binary32 attention kernel through the posenc plugin ABI (posenc_attention alone), written the
 * way a third party would, in plain C99: RoPE angles formed in binary64 (frequencies in long
 * double, rounded once to binary64), q' and k' rotated in binary32 and stored in the storage
 * format (a KV cache), logits and an online softmax over blocks of 16 keys in binary32
 * (Milakov and Gimelshein 2018, FlashAttention's loop), O and L rounded to the storage format. It
 * answers f32, bf16 and f16 storage (f64: POSENC_UNSUPPORTED, refused). Compiled as is it must
 * pass `strict`; compiled with one of the MUTANT_* macros it has a documented bug the suite must
 * catch:
 *   MUTANT_ROPE_Q_ONLY   RoPE applied to q but not to k (a fused kernel that forgets the keys)
 *   MUTANT_P_BF16        P rounded to bf16 before P V (FlashAttention's P in the storage format)
 *                        without declaring it; with DECLARE_P_BF16 too, declared in
 *                        posenc_plugin_info.probability_format
 *   MUTANT_LSE_BASE2     L left in base 2 (FlashInfer's return_lse) instead of times ln 2
 * NO_LSE: a kernel that forms no L and leaves lse untouched (judged on O alone).
 * ABI_VERSION_2: built against version 2 of plugin.h, its info ending after working_format and
 * followed in memory by codes no version defines (the suite must not read them).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "posenc/plugin.h"

#ifdef DECLARE_P_BF16
#define PROBABILITY POSENC_ROUNDING_BF16
#else
#define PROBABILITY POSENC_ROUNDING_NONE
#endif

#ifdef ABI_VERSION_2
typedef struct {
  uint32_t abi_version;
  const char* name;
  const char* version;
  uint32_t capabilities;
  int32_t working_format[4];
} info_v2;
/* The version 2 info, then what a version 3 reader would take for score and probability formats. */
static const struct {
  info_v2 info;
  int32_t beyond[8];
} info_2 = {{2, PLUGIN_NAME, "1", POSENC_CAP_ATTENTION, {0, 0, 0, 0}}, {99, 99, 99, 99, 99, 99, 99, 99}};
const posenc_plugin_info* posenc_plugin_query(void) { return (const posenc_plugin_info*)(const void*)&info_2.info; }
#else
/* Working format: binary32 for every storage format it answers (the default); its angles are
 * binary64, which only makes `standard`'s allowance smaller than needed. */
static const posenc_plugin_info info = {POSENC_PLUGIN_ABI_VERSION,
                                        PLUGIN_NAME,
                                        "1",
                                        POSENC_CAP_ATTENTION,
                                        {POSENC_WORKING_DEFAULT, POSENC_WORKING_DEFAULT, POSENC_WORKING_DEFAULT,
                                         POSENC_WORKING_DEFAULT},
                                        {POSENC_ROUNDING_NONE, POSENC_ROUNDING_NONE, POSENC_ROUNDING_NONE,
                                         POSENC_ROUNDING_NONE},
                                        {PROBABILITY, PROBABILITY, PROBABILITY, PROBABILITY}};
const posenc_plugin_info* posenc_plugin_query(void) { return &info; }
#endif

/* ---- storage formats ---- */

static float from_bits32(uint32_t b) {
  float f;
  memcpy(&f, &b, 4);
  return f;
}

static uint32_t bits32(float f) {
  uint32_t b;
  memcpy(&b, &f, 4);
  return b;
}

/* binary32 to bf16, to nearest, ties to even (NaN stays NaN). */
static uint16_t to_bf16(float f) {
  uint32_t b = bits32(f);
  if ((b & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((b >> 16) | 0x40);
  b += 0x7fffu + ((b >> 16) & 1u);
  return (uint16_t)(b >> 16);
}

static float round_to_bf16(float f) { return from_bits32((uint32_t)to_bf16(f) << 16); }

static size_t element_size(posenc_dtype t) { return t == POSENC_F32 ? 4 : 2; }

static float get(const void* in, posenc_dtype t, int64_t i) {
  const unsigned char* p = (const unsigned char*)in + (size_t)i * element_size(t);
  if (t == POSENC_F32) {
    float f;
    memcpy(&f, p, 4);
    return f;
  }
  uint16_t h;
  memcpy(&h, p, 2);
  if (t == POSENC_BF16) return from_bits32((uint32_t)h << 16);
  _Float16 g;
  memcpy(&g, p, 2);
  return (float)g;
}

/* f rounded to the storage format (once: binary32 to bf16 or f16 is a single rounding). */
static float store_round(float f, posenc_dtype t) {
  if (t == POSENC_F32) return f;
  if (t == POSENC_BF16) return round_to_bf16(f);
  return (float)(_Float16)f;
}

static void put(void* out, posenc_dtype t, int64_t i, float f) {
  unsigned char* p = (unsigned char*)out + (size_t)i * element_size(t);
  if (t == POSENC_F32) {
    memcpy(p, &f, 4);
  } else if (t == POSENC_BF16) {
    const uint16_t h = to_bf16(f);
    memcpy(p, &h, 2);
  } else {
    const _Float16 h = (_Float16)f;
    memcpy(p, &h, 2);
  }
}

/* ---- RoPE frequencies in long double, rounded once to binary64 (conformance/SPEC.md 2.3, 2.4) ---- */

#define MAX_PAIRS 1024

static const long double kPi = 3.141592653589793238462643383279502884L;

/* YaRN's g(s, mu) (HF yarn_get_mscale). */
static long double yarn_g(long double s, long double mu) { return s <= 1 ? 1 : mu * logl(s) / 10 + 1; }

/* The frequencies of every pair and the attention factor; 0 when the scaling is one this kernel
 * does not implement (ntk). */
static int frequencies(const posenc_rope_params* r, double* inv_freq, double* attention) {
  const posenc_rope_scaling* s = &r->scaling;
  const int proportional = r->partial == 1;
  const int64_t span = proportional ? r->head_dim : r->rotary_dim, pairs = span / 2;
  const long double D = (long double)span, factor = (long double)s->factor;
  long double base = (long double)r->base, m = 1;
  if (s->kind == POSENC_SCALING_NTK) return 0;
  if (s->kind == POSENC_SCALING_DYNAMIC) {
    const long double original = (long double)s->original_max_positions;
    const long double length = s->seq_len > s->original_max_positions ? (long double)s->seq_len : original;
    base *= powl(factor * length / original - (factor - 1), D / (D - 2));
  }
  long double low = 0, high = 0;
  if (s->kind == POSENC_SCALING_YARN) {
    const long double original = (long double)s->original_max_positions;
    const long double fast = (s->fields & POSENC_FIELD_BETA_FAST) ? s->beta_fast : 32;
    const long double slow = (s->fields & POSENC_FIELD_BETA_SLOW) ? s->beta_slow : 1;
    const int truncate = (s->fields & POSENC_FIELD_TRUNCATE) ? s->truncate != 0 : 1;
    low = D * logl(original / (fast * 2 * kPi)) / (2 * logl(base));
    high = D * logl(original / (slow * 2 * kPi)) / (2 * logl(base));
    if (truncate) {
      low = floorl(low);
      high = ceill(high);
    }
    if (low < 0) low = 0;
    if (high > D - 1) high = D - 1;
    if (low == high) high += 0.001L;
    if (s->fields & POSENC_FIELD_ATTENTION_FACTOR) {
      m = s->attention_factor;
    } else if ((s->fields & POSENC_FIELD_MSCALE) && (s->fields & POSENC_FIELD_MSCALE_ALL_DIM)) {
      m = yarn_g(factor, s->mscale) / yarn_g(factor, s->mscale_all_dim);
    } else {
      m = yarn_g(factor, 1);
    }
  }
  if (s->kind == POSENC_SCALING_LONGROPE) {
    const long double original = (long double)s->original_max_positions;
    if (s->fields & POSENC_FIELD_ATTENTION_FACTOR) {
      m = s->attention_factor;
    } else {
      m = factor <= 1 ? 1 : sqrtl(1 + logl(factor) / logl(original));
    }
  }
  if (pairs > MAX_PAIRS) return 0;
  for (int64_t i = 0; i < pairs; ++i) {
    const long double exponent = -2 * (long double)i / D;
    long double theta = powl(base, exponent);
    if (proportional && 2 * i >= r->rotary_dim) theta = 0;
    switch (s->kind) {
      case POSENC_SCALING_LINEAR: theta /= factor; break;
      case POSENC_SCALING_YARN: {
        long double ramp = ((long double)i - low) / (high - low);
        ramp = ramp < 0 ? 0 : ramp > 1 ? 1 : ramp;
        theta = theta / factor * ramp + theta * (1 - ramp);
        break;
      }
      case POSENC_SCALING_LLAMA3: {
        const long double original = (long double)s->original_max_positions, wavelength = 2 * kPi / theta;
        const long double lo = s->low_freq_factor, hi = s->high_freq_factor;
        if (wavelength > original / lo) {
          theta /= factor;
        } else if (hi > lo && wavelength >= original / hi) { /* equal factors: no medium band */
          const long double smooth = (original / wavelength - lo) / (hi - lo);
          theta = (1 - smooth) * theta / factor + smooth * theta;
        }
        break;
      }
      case POSENC_SCALING_LONGROPE: {
        const double* e = s->seq_len > s->original_max_positions ? s->long_factor : s->short_factor;
        const int64_t n = s->seq_len > s->original_max_positions ? s->n_long_factor : s->n_short_factor;
        if (n != pairs) return 0;
        theta = 1 / ((long double)e[i] * powl(base, -exponent));
        break;
      }
      default: break;
    }
    inv_freq[i] = (double)theta;
  }
  *attention = (double)m;
  return 1;
}

/* ---- the kernel ---- */

#define BLOCK 16

typedef struct {
  const posenc_rope_params* rope;
  double inv_freq[MAX_PAIRS];
  double attention;
  int64_t pairs;
  posenc_dtype dtype;
} Rotation;

/* Element indices of pair i (SPEC.md 2.3: interleaved (2i, 2i+1), half (i, i + n/2)). */
static int64_t pair_first(const Rotation* r, int64_t i) { return r->rope->layout == 0 ? 2 * i : i; }
static int64_t pair_second(const Rotation* r, int64_t i) { return r->rope->layout == 0 ? 2 * i + 1 : i + r->pairs; }

/* The axis pair i takes its position from: the M-RoPE section holding it. */
static int axis_of(const posenc_rope_params* rope, int64_t i) {
  int64_t end = 0;
  if (rope->n_axes <= 1) return 0;
  for (int a = 0; a < rope->n_axes; ++a) {
    end += rope->mrope_section[a];
    if (i < end) return a;
  }
  return rope->n_axes - 1;
}

/* x (width d, read from `in` at `at`) rotated at `position` (or by the given table row `row`) and
 * stored in the storage format: out[0..d). */
static void rotate(const Rotation* r, const void* in, int64_t at, int64_t d, const int64_t* position,
                   const void* table_row, int apply, float* out) {
  for (int64_t e = 0; e < d; ++e) out[e] = get(in, r->dtype, at + e);
  if (!r->rope || !apply) return;
  for (int64_t i = 0; i < r->pairs; ++i) {
    float c, s;
    if (table_row) {
      c = get(table_row, r->dtype, i);
      s = get(table_row, r->dtype, r->pairs + i);
    } else {
      const double angle = (double)((long double)position[axis_of(r->rope, i)] * r->inv_freq[i]);
      c = (float)(cos(angle) * r->attention);
      s = (float)(sin(angle) * r->attention);
    }
    if (r->rope->inverse) s = -s;
    const int64_t a = pair_first(r, i), b = pair_second(r, i);
    const float xa = out[a], xb = out[b];
    out[a] = xa * c - xb * s;
    out[b] = xa * s + xb * c;
  }
  for (int64_t e = 0; e < d; ++e) out[e] = store_round(out[e], r->dtype);
}

/* ALiBi's slope of head h of n (SPEC.md 2.5), in binary32. */
static float alibi_slope(int64_t h, int64_t n) {
  int64_t m = 1;
  while (m * 2 <= n) m *= 2;
  if (h < m) return exp2f(-8.0f * (float)(h + 1) / (float)m);
  return exp2f(-4.0f * (float)(2 * (h - m) + 1) / (float)m);
}

static int visible(const posenc_attention_params* p, const uint8_t* mask, int64_t nq, int64_t nk, int64_t i, int64_t j) {
  if (p->mask == POSENC_MASK_CAUSAL) return j <= i + (nk - nq);
  if (p->mask == POSENC_MASK_EXPLICIT) return mask[i * nk + j] != 0;
  return 1;
}

/* Whether every element of rows x heads x dim values at the strides is finite (SPEC.md 2.7: the
 * inputs of attention are finite; an infinite logit has no softmax). */
static int all_finite(const void* x, posenc_dtype t, int64_t rows, int64_t heads, int64_t dim, int64_t token_stride,
                      int64_t head_stride) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t e = 0; e < dim; ++e)
        if (!isfinite(get(x, t, i * token_stride + h * head_stride + e))) return 0;
  return 1;
}

/* Parameters this kernel checks before anything else: the refusals a careful kernel makes. */
static posenc_status check(const posenc_attention_params* p, posenc_dtype dtype, int64_t nq, int64_t nk,
                           const void* q, const int64_t q_strides[2], const void* k, const int64_t k_strides[2],
                           const void* v, const int64_t v_strides[2], const uint8_t* mask, const void* table,
                           const void* o, const int64_t* qp, const int64_t* kp) {
  if (dtype != POSENC_F64 && dtype != POSENC_F32 && dtype != POSENC_BF16 && dtype != POSENC_F16)
    return POSENC_INVALID_PARAMETERS;
  if (p->head_dim < 1 || p->value_dim < 1 || p->query_heads < 1 || p->kv_heads < 1 || p->kv_heads > p->query_heads ||
      p->query_heads % p->kv_heads != 0 || nq < 1 || nk < 1 || p->mask < 0 || p->mask > 2)
    return POSENC_INVALID_PARAMETERS;
  if (p->mask == POSENC_MASK_CAUSAL && nq > nk) return POSENC_INVALID_PARAMETERS;
  if (!q || !k || !v || !o || !qp || !kp || (p->mask == POSENC_MASK_EXPLICIT) != (mask != NULL) ||
      (p->rope_table_given != 0) != (table != NULL) || (p->rope_table_given && !p->rope))
    return POSENC_INVALID_PARAMETERS;
  if (!(p->scale > 0) || !isfinite(p->scale)) return POSENC_INVALID_PARAMETERS;
  if (p->rope) {
    const posenc_rope_params* r = p->rope;
    if (r->head_dim != p->head_dim || r->rotary_dim < 2 || r->rotary_dim % 2 || r->rotary_dim > r->head_dim ||
        r->layout < 0 || r->layout > 1 || r->n_axes < 1 || r->n_axes > 4 || !(r->base > 1))
      return POSENC_INVALID_PARAMETERS;
  }
  if (p->alibi && (p->alibi->n_heads != p->query_heads || p->alibi->mode < 0 || p->alibi->mode > 1))
    return POSENC_INVALID_PARAMETERS;
  /* A given scale is the scale: a denominator or an mscale correction beside it would be ignored. */
  if ((p->scale_fields & POSENC_SCALE_GIVEN) &&
      (p->scale_fields & (POSENC_SCALE_DENOMINATOR | POSENC_SCALE_MSCALE_ALL_DIM)))
    return POSENC_INVALID_PARAMETERS;
  if (dtype == POSENC_F64) return POSENC_UNSUPPORTED; /* a binary32 kernel */
  if (p->head_dim > 4096 || p->value_dim > 4096) return POSENC_UNSUPPORTED;
  if (!all_finite(q, dtype, nq, p->query_heads, p->head_dim, q_strides[0], q_strides[1]) ||
      !all_finite(k, dtype, nk, p->kv_heads, p->head_dim, k_strides[0], k_strides[1]) ||
      !all_finite(v, dtype, nk, p->kv_heads, p->value_dim, v_strides[0], v_strides[1]))
    return POSENC_INVALID_PARAMETERS;
  if (mask)
    for (int64_t i = 0; i < nq * nk; ++i)
      if (mask[i] > 1) return POSENC_INVALID_PARAMETERS;
  const int64_t axes = p->rope ? p->rope->n_axes : 1; /* ALiBi reads the first coordinate */
  if (p->alibi)
    for (int64_t i = 0; i < nq; ++i)
      for (int64_t j = 0; j < nk; ++j) {
        /* ALiBi's distances are exact integers in binary64 up to 2^53; causal ALiBi sees no later key. */
        const int64_t qi = qp[i * axes], kj = kp[j * axes];
        if (qi < 0 || kj < 0 || qi > (INT64_C(1) << 53) || kj > (INT64_C(1) << 53)) return POSENC_INVALID_PARAMETERS;
        if (p->alibi->mode == 0 && kj > qi && visible(p, mask, nq, nk, i, j)) return POSENC_INVALID_PARAMETERS;
      }
  return POSENC_OK;
}

posenc_status posenc_attention(const posenc_attention_params* p, posenc_dtype dtype, int64_t n_queries,
                               int64_t n_keys, const int64_t* query_positions, const int64_t* key_positions,
                               const void* q, int64_t q_token_stride, int64_t q_head_stride, const void* k,
                               int64_t k_token_stride, int64_t k_head_stride, const void* v,
                               int64_t v_token_stride, int64_t v_head_stride, const uint8_t* mask,
                               const void* table, void* o, int64_t o_token_stride, int64_t o_head_stride,
                               void* lse, int64_t lse_token_stride, int64_t lse_head_stride) {
  static Rotation r;
  static float qr[4096], kr[4096], acc[4096], s[BLOCK];
  if (!p) return POSENC_INVALID_PARAMETERS;
  const posenc_status status =
      check(p, dtype, n_queries, n_keys, q, (const int64_t[2]){q_token_stride, q_head_stride}, k,
            (const int64_t[2]){k_token_stride, k_head_stride}, v, (const int64_t[2]){v_token_stride, v_head_stride},
            mask, table, o, query_positions, key_positions);
  if (status != POSENC_OK) return status;
  const int64_t d = p->head_dim, dv = p->value_dim, H = p->query_heads, group = H / p->kv_heads;
  const int64_t axes = p->rope ? p->rope->n_axes : 1;
  r.rope = p->rope;
  r.dtype = dtype;
  r.attention = 1;
  r.pairs = 0;
  if (p->rope) {
    r.pairs = (p->rope->partial == 1 ? p->rope->head_dim : p->rope->rotary_dim) / 2;
    if (!p->rope_table_given && !frequencies(p->rope, r.inv_freq, &r.attention)) return POSENC_UNSUPPORTED;
  }
  if (table && !all_finite(table, dtype, n_queries + n_keys, 1, 2 * r.pairs, 2 * r.pairs, 0))
    return POSENC_INVALID_PARAMETERS;
  const float scale = (float)p->scale;
  for (int64_t i = 0; i < n_queries; ++i) {
    const int64_t* qpos = query_positions + i * axes;
    for (int64_t h = 0; h < H; ++h) {
      const int64_t g = h / group;
      const void* q_row = table ? (const unsigned char*)table + (size_t)(i * 2 * r.pairs) * element_size(dtype) : NULL;
      rotate(&r, q, i * q_token_stride + h * q_head_stride, d, qpos, q_row, 1, qr);
      float running_max = -INFINITY, sum = 0;
      for (int64_t e = 0; e < dv; ++e) acc[e] = 0;
      int64_t j = 0;
      while (j < n_keys) {
        /* One block of up to BLOCK visible keys: their logits, then the rescaled sums. */
        int64_t keys[BLOCK], n = 0;
        float block_max = running_max;
        for (; j < n_keys && n < BLOCK; ++j) {
          if (!visible(p, mask, n_queries, n_keys, i, j)) continue;
          const int64_t* kpos = key_positions + j * axes;
          const void* k_row =
              table ? (const unsigned char*)table + (size_t)((n_queries + j) * 2 * r.pairs) * element_size(dtype) : NULL;
#ifdef MUTANT_ROPE_Q_ONLY
          rotate(&r, k, j * k_token_stride + g * k_head_stride, d, kpos, k_row, 0, kr);
#else
          rotate(&r, k, j * k_token_stride + g * k_head_stride, d, kpos, k_row, 1, kr);
#endif
          float dot = 0;
          for (int64_t e = 0; e < d; ++e) dot += qr[e] * kr[e];
          float logit = dot * scale;
          if (p->alibi) {
            int64_t distance = qpos[0] - kpos[0];
            if (p->alibi->mode == 1 && distance < 0) distance = -distance;
            logit += -alibi_slope(h, p->alibi->n_heads) * (float)distance;
          }
          s[n] = logit;
          keys[n++] = j;
          if (logit > block_max) block_max = logit;
        }
        if (n == 0) continue;
        const float alpha = expf(running_max - block_max);
        sum *= alpha;
        for (int64_t e = 0; e < dv; ++e) acc[e] *= alpha;
        for (int64_t b = 0; b < n; ++b) {
          float w = expf(s[b] - block_max);
          sum += w;
#ifdef MUTANT_P_BF16
          w = round_to_bf16(w);
#endif
          const int64_t at = keys[b] * v_token_stride + g * v_head_stride;
          for (int64_t e = 0; e < dv; ++e) acc[e] += w * get(v, dtype, at + e);
        }
        running_max = block_max;
      }
      if (sum == 0) return POSENC_INVALID_PARAMETERS; /* a row that sees no key */
      for (int64_t e = 0; e < dv; ++e) put(o, dtype, i * o_token_stride + h * o_head_stride + e, acc[e] / sum);
#ifndef NO_LSE
      if (lse) {
#ifdef MUTANT_LSE_BASE2
        const float l = (running_max + logf(sum)) / 0.693147180559945309f;
#else
        const float l = running_max + logf(sum);
#endif
        put(lse, dtype, i * lse_token_stride + h * lse_head_stride, l);
      }
#else
      (void)lse, (void)lse_token_stride, (void)lse_head_stride;
#endif
    }
  }
  return POSENC_OK;
}
