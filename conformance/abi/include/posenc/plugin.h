/* posenc plugin ABI: how a third-party implementation of positional encodings is tested by
 * `posenc conform --impl PATH.so`. Plain C99. A plugin exports posenc_plugin_query and any subset
 * of the entry points below (looked up by name); a missing entry point, or a call that returns
 * POSENC_UNSUPPORTED, is reported as not supported, never as a failure.
 *
 * Conventions
 * - Parameters mean exactly what conformance/SPEC.md §2 defines; reals are binary64.
 * - Tensors are in the storage format `dtype`: f64 = double, f32 = float, bf16 and f16 = uint16_t
 *   bit patterns. Strides count elements, not bytes.
 * - An entry point must refuse invalid parameters with POSENC_INVALID_PARAMETERS (the golden
 *   vectors' invalid cases check this), write nothing outside the output it is given, and leave
 *   its inputs unchanged, and print nothing (stdout and stderr belong to the host program). The
 *   suite runs each call in a child process with guard pages around every buffer, a timeout, a
 *   cap on the memory it may map (--memory-limit) and a check that nothing was printed.
 */
#ifndef POSENC_PLUGIN_H
#define POSENC_PLUGIN_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version 2 appended working_format to posenc_plugin_info, version 3 score_format and
 * probability_format (and added posenc_attention, looked up by name like every entry point). A
 * version only appends fields; the suite accepts a plugin built for any version from 1 to this
 * one and reads only the fields its version has (conformance/SPEC.md section 8). */
#define POSENC_PLUGIN_ABI_VERSION 3

/* In C++ the two enums that cross the ABI as values get the fixed underlying type int, so any
 * int a caller passes or a plugin returns (an unknown dtype, a garbage status) is a valid value
 * to test, not undefined behaviour; in C, and in the calling convention, they are ints anyway. */
#ifdef __cplusplus
#define POSENC_ENUM_INT : int
#else
#define POSENC_ENUM_INT
#endif

typedef enum posenc_status POSENC_ENUM_INT {
  POSENC_OK = 0,
  POSENC_INVALID_PARAMETERS = 1,
  POSENC_UNSUPPORTED = 2
} posenc_status;

typedef enum posenc_dtype POSENC_ENUM_INT { POSENC_F64 = 0, POSENC_F32 = 1, POSENC_BF16 = 2, POSENC_F16 = 3 } posenc_dtype;

enum posenc_capability {
  POSENC_CAP_ROPE = 1u << 0,
  POSENC_CAP_SINUSOIDAL = 1u << 1,
  POSENC_CAP_ALIBI = 1u << 2,
  POSENC_CAP_LEARNED = 1u << 3,
  POSENC_CAP_ATTENTION = 1u << 4
};

/* The format a plugin forms RoPE and sinusoidal angles and frequencies in, for one storage
 * format (conformance/SPEC.md section 5: `standard` allows an angle's error in units of it;
 * angles formed in a 16-bit format are not covered). */
enum posenc_working_format {
  POSENC_WORKING_DEFAULT = 0, /* binary64 for f64 storage, binary32 for f32, bf16 and f16 */
  POSENC_WORKING_F64 = 1,
  POSENC_WORKING_F32 = 2
};

/* The format a plugin's attention rounds its scores s = scale q'.k' + b to, or its softmax
 * probabilities P to before P V, for one storage format (conformance/SPEC.md section 5,
 * "Attention": the score format S and the probability format P). MLX's CPU attention in bf16
 * rounds the scores to bf16; FlashAttention rounds P to the storage format. */
enum posenc_rounding_format {
  POSENC_ROUNDING_NONE = 0, /* not rounded: kept in the working format */
  POSENC_ROUNDING_F64 = 1,
  POSENC_ROUNDING_F32 = 2,
  POSENC_ROUNDING_BF16 = 3,
  POSENC_ROUNDING_F16 = 4
};

typedef struct posenc_plugin_info {
  uint32_t abi_version; /* POSENC_PLUGIN_ABI_VERSION the plugin was built against */
  const char* name;
  const char* version;
  uint32_t capabilities; /* posenc_capability bits: informational */
  /* Since version 2: posenc_working_format per storage format, indexed by posenc_dtype
   * (working_format[POSENC_BF16]: the format it computes bf16 outputs in); 0 is the default. */
  int32_t working_format[4];
  /* Since version 3: posenc_rounding_format per storage format, indexed by posenc_dtype, of
   * posenc_attention's scores and probabilities; 0 (not rounded) is what older versions get. */
  int32_t score_format[4];
  int32_t probability_format[4];
} posenc_plugin_info;

enum posenc_rope_scaling_kind {
  POSENC_SCALING_NONE = 0,
  POSENC_SCALING_LINEAR = 1,
  POSENC_SCALING_NTK = 2,
  POSENC_SCALING_DYNAMIC = 3,
  POSENC_SCALING_YARN = 4,
  POSENC_SCALING_LLAMA3 = 5,
  POSENC_SCALING_LONGROPE = 6
};

/* Bits of posenc_rope_scaling.fields: which optional fields are set (others are to be ignored). */
enum posenc_rope_field {
  POSENC_FIELD_FACTOR = 1u << 0,
  POSENC_FIELD_ORIGINAL_MAX_POSITIONS = 1u << 1,
  POSENC_FIELD_SEQ_LEN = 1u << 2,
  POSENC_FIELD_BETA_FAST = 1u << 3,
  POSENC_FIELD_BETA_SLOW = 1u << 4,
  POSENC_FIELD_TRUNCATE = 1u << 5,
  POSENC_FIELD_MSCALE = 1u << 6,
  POSENC_FIELD_MSCALE_ALL_DIM = 1u << 7,
  POSENC_FIELD_ATTENTION_FACTOR = 1u << 8,
  POSENC_FIELD_LOW_FREQ_FACTOR = 1u << 9,
  POSENC_FIELD_HIGH_FREQ_FACTOR = 1u << 10
};

typedef struct posenc_rope_scaling {
  int32_t kind; /* posenc_rope_scaling_kind */
  uint32_t fields;
  double factor;
  int64_t original_max_positions;
  int64_t seq_len;
  double beta_fast, beta_slow;
  int32_t truncate;
  double mscale, mscale_all_dim, attention_factor;
  double low_freq_factor, high_freq_factor;
  int64_t n_short_factor, n_long_factor; /* longrope: lengths of the arrays (0 when absent) */
  const double* short_factor;
  const double* long_factor;
} posenc_rope_scaling;

typedef struct posenc_rope_params {
  int64_t head_dim, rotary_dim;
  double base;
  int32_t layout;  /* 0 interleaved, 1 half */
  int32_t partial; /* 0 standard, 1 proportional */
  int32_t inverse; /* nonzero: rotate by the negative angle */
  int32_t n_axes;  /* position coordinates per token: 1, or the number of M-RoPE sections */
  int64_t mrope_section[4]; /* used when n_axes > 1 */
  posenc_rope_scaling scaling;
} posenc_rope_params;

typedef struct posenc_sinusoidal_params {
  int64_t d_model;
  double base;
  int32_t layout;      /* 0 interleaved, 1 concatenated */
  int32_t frequencies; /* 0 paper, 1 tensor2tensor */
} posenc_sinusoidal_params;

typedef struct posenc_alibi_params {
  int64_t n_heads;
  int32_t mode; /* 0 causal, 1 symmetric */
} posenc_alibi_params;

enum posenc_attention_mask {
  POSENC_MASK_NONE = 0,     /* every query row sees every key */
  POSENC_MASK_CAUSAL = 1,   /* bottom-right aligned: row i sees keys 0 .. i + (n_keys - n_queries) */
  POSENC_MASK_EXPLICIT = 2  /* the call's `mask` */
};

/* Bits of posenc_attention_params.scale_fields: how the softmax scale is defined (SPEC.md
 * section 2.7). With POSENC_SCALE_GIVEN, `scale` is the scale itself, exactly; without it the
 * scale is 1/sqrt(scale_denominator, or head_dim when that bit is clear), times
 * g(rope factor, scale_mscale_all_dim)^2 when that bit is set, and `scale` is that real number
 * rounded to the nearest binary64: a plugin may use it, or form the scale itself from the
 * fields, as its framework does. */
enum posenc_scale_field {
  POSENC_SCALE_GIVEN = 1u << 0,
  POSENC_SCALE_DENOMINATOR = 1u << 1,
  POSENC_SCALE_MSCALE_ALL_DIM = 1u << 2
};

typedef struct posenc_attention_params {
  int64_t head_dim;    /* d: the width of q and k (the rope's head_dim when rotated) */
  int64_t value_dim;   /* d_v: the width of v and O */
  int64_t query_heads; /* H */
  int64_t kv_heads;    /* G, dividing H: query head h reads KV head h / (H / G) */
  const posenc_rope_params* rope;   /* NULL: q and k are not rotated */
  const posenc_alibi_params* alibi; /* NULL: no bias; else its n_heads is H */
  double scale;                     /* the softmax scale in binary64 (posenc_scale_field) */
  double scale_denominator;         /* read when POSENC_SCALE_DENOMINATOR is set */
  double scale_mscale_all_dim;      /* read when POSENC_SCALE_MSCALE_ALL_DIM is set */
  uint32_t scale_fields;            /* posenc_scale_field bits */
  int32_t mask;                     /* posenc_attention_mask */
  int32_t rope_table_given;         /* nonzero: the rotation's cos/sin rows are the call's `table` */
} posenc_attention_params;

/* Required: identifies the plugin. */
const posenc_plugin_info* posenc_plugin_query(void);

/* RoPE on a batch: for token t and head h,
 *   y[t*y_token_stride + h*y_head_stride + 0..head_dim) = rope(x[t*x_token_stride + h*x_head_stride + ...],
 *                                                            positions[t*n_axes .. t*n_axes + n_axes))
 * x and y may be the same buffer (in place). */
posenc_status posenc_rope_apply(const posenc_rope_params* p, posenc_dtype dtype, int64_t n_tokens,
                                int64_t n_heads, const int64_t* positions, const void* x,
                                int64_t x_token_stride, int64_t x_head_stride, void* y,
                                int64_t y_token_stride, int64_t y_head_stride);

/* cos/sin rows: out[i*2n .. i*2n + 2n) = [m cos t_0 .. m cos t_{n-1}, m sin t_0 .. m sin t_{n-1}],
 * n the number of rotated pairs, for the position positions[i*n_axes ..]. */
posenc_status posenc_rope_table(const posenc_rope_params* p, posenc_dtype dtype, int64_t n_positions,
                                const int64_t* positions, void* out);

/* Per-pair inverse frequencies (n values) and the attention factor, in binary64. */
posenc_status posenc_rope_frequencies(const posenc_rope_params* p, double* inv_freq, double* attention_factor);

/* out[i*d_model ..] = PE(positions[i]). */
posenc_status posenc_sinusoidal_table(const posenc_sinusoidal_params* p, posenc_dtype dtype, int64_t n_positions,
                                      const int64_t* positions, void* out);

/* out[i*d_model ..] = x[i*d_model ..] * sqrt(d_model) + PE(positions[i]). */
posenc_status posenc_sinusoidal_embed(const posenc_sinusoidal_params* p, posenc_dtype dtype, int64_t n_positions,
                                      const int64_t* positions, const void* x, void* out);

posenc_status posenc_alibi_slopes(const posenc_alibi_params* p, posenc_dtype dtype, void* out);

/* out[(h*n_queries + i)*n_keys + j] = bias of head h for query_positions[i], key_positions[j]. */
posenc_status posenc_alibi_bias(const posenc_alibi_params* p, posenc_dtype dtype, int64_t n_queries,
                                const int64_t* query_positions, int64_t n_keys, const int64_t* key_positions,
                                void* out);

/* out[i*dim ..] = table[positions[i]*dim ..]; a position outside [0, max_positions) is invalid. */
posenc_status posenc_learned_lookup(int64_t max_positions, int64_t dim, posenc_dtype dtype, const void* table,
                                    int64_t n_positions, const int64_t* positions, void* out);

/* Attention with its positional encoding inside (conformance/SPEC.md section 2.7): one problem of
 * n_queries query rows and n_keys key/value rows, each row a token at its own position.
 * Inputs, in dtype but the positions and the mask:
 *   q[i*q_token_stride + h*q_head_stride + 0..head_dim)   query row i, query head h
 *   k[j*k_token_stride + g*k_head_stride + 0..head_dim)   key row j, KV head g
 *   v[j*v_token_stride + g*v_head_stride + 0..value_dim)  value row j, KV head g
 *   query_positions[i*n_axes .. + n_axes), key_positions[j*n_axes ..]: the tokens' positions,
 *     n_axes = rope ? rope->n_axes : 1 (ALiBi reads the first)
 *   mask: for POSENC_MASK_EXPLICIT, [n_queries][n_keys] row-major, 1 visible and 0 not; else NULL
 *   table: for rope_table_given, [n_queries + n_keys][2 pairs] in posenc_rope_table's layout, the
 *     queries' rows then the keys' (attention factor included); else NULL
 * Outputs, in dtype:
 *   o[i*o_token_stride + h*o_head_stride + 0..value_dim): O of query row i, query head h
 *   lse[i*lse_token_stride + h*lse_head_stride]: L of query row i, query head h, the natural-log
 *     log-sum-exp of its scores. NULL: the caller does not want L, and nothing is written there.
 *     A plugin whose kernel forms no L leaves a non-NULL lse untouched: the suite judges L only
 *     when a call writes it (section 8), and O alone otherwise.
 * The inputs may share memory with each other (a fused QKV buffer); o and lse share none with each
 * other or with an input. Strides follow posenc_rope_apply's rules (section 8). */
posenc_status posenc_attention(const posenc_attention_params* p, posenc_dtype dtype, int64_t n_queries,
                               int64_t n_keys, const int64_t* query_positions, const int64_t* key_positions,
                               const void* q, int64_t q_token_stride, int64_t q_head_stride, const void* k,
                               int64_t k_token_stride, int64_t k_head_stride, const void* v,
                               int64_t v_token_stride, int64_t v_head_stride, const uint8_t* mask,
                               const void* table, void* o, int64_t o_token_stride, int64_t o_head_stride,
                               void* lse, int64_t lse_token_stride, int64_t lse_head_stride);

#ifdef __cplusplus
}
#endif

#endif /* POSENC_PLUGIN_H */
