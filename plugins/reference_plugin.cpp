// The posenc reference exposed through the C ABI (libposenc_reference_plugin.so): every entry
// point, every format, correctly rounded. `posenc conform --impl` on it must give the same verdict
// as the in-process reference.
#include <cstring>
#include <functional>

#include "posenc/abi/convert.hpp"
#include "posenc/plugin.h"
#include "posenc/reference/reference.hpp"
#include "posenc/strided_view.hpp"
#include "recent_answers.hpp"

namespace {

using namespace posenc;

std::size_t element_size(Format f) { return static_cast<std::size_t>(spec(f).width) / 8; }

void put(const Rounded& r, Format f, void* out, std::size_t index) {
  const std::uint64_t bits = r.bits_of(f);
  std::memcpy(static_cast<unsigned char*>(out) + index * element_size(f), &bits, element_size(f));  // little-endian
}

double get(const void* in, Format f, std::size_t index) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, static_cast<const unsigned char*>(in) + index * element_size(f), element_size(f));
  return to_double(f, bits);
}

// Runs body; posenc's validation errors become POSENC_INVALID_PARAMETERS.
posenc_status guarded(const std::function<void()>& body) {
  try {
    body();
    return POSENC_OK;
  } catch (const InvalidParameter&) {
    return POSENC_INVALID_PARAMETERS;
  } catch (...) {
    return POSENC_UNSUPPORTED;
  }
}

// Per thread: a host may call the entry points from several threads.
thread_local plugin::RecentAnswers<RopeParams> rope_rotations, rope_rows;
thread_local plugin::RecentAnswers<SinusoidalParams> sinusoidal_rows, sinusoidal_embeddings;
thread_local plugin::RecentAnswers<AttentionParams> attentions;

// One strided tensor of an attention call, read into a row-major vector: [outer][inner][row].
std::vector<double> gather(const StridedView& v, Format f) {
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(v.outer * v.inner * v.row));
  for (std::int64_t t = 0; t < v.outer; ++t) {
    for (std::int64_t h = 0; h < v.inner; ++h) {
      const auto at = static_cast<std::size_t>(t * v.outer_stride + h * v.inner_stride);
      for (std::int64_t e = 0; e < v.row; ++e) out.push_back(get(v.base, f, at + static_cast<std::size_t>(e)));
    }
  }
  return out;
}

// A contiguous input of `count` elements as a view, so that the outputs can be checked disjoint from it.
StridedView flat(const char* name, const void* base, std::int64_t count, std::size_t element_size) {
  return {name, base, 1, 1, count, 0, 0, element_size};
}

// A pointer the call needs (a tensor of its problem) is non-null, one it must not have is null.
void check_pointer(const char* name, const void* pointer, bool needed, const char* why) {
  if (needed && !pointer) throw InvalidParameter(name, "null", "a non-null pointer");
  if (!needed && pointer) throw InvalidParameter(name, "non-null", std::string("null ") + why);
}

// Working formats left at the default and no rounding of attention's scores or probabilities
// declared: it is exact, and its reports must match the in-process reference's, which declares none.
const posenc_plugin_info kInfo{
    POSENC_PLUGIN_ABI_VERSION,
    "posenc reference through the C ABI",
    "1",
    POSENC_CAP_ROPE | POSENC_CAP_SINUSOIDAL | POSENC_CAP_ALIBI | POSENC_CAP_LEARNED | POSENC_CAP_ATTENTION,
    {POSENC_WORKING_DEFAULT, POSENC_WORKING_DEFAULT, POSENC_WORKING_DEFAULT, POSENC_WORKING_DEFAULT},
    {POSENC_ROUNDING_NONE, POSENC_ROUNDING_NONE, POSENC_ROUNDING_NONE, POSENC_ROUNDING_NONE},
    {POSENC_ROUNDING_NONE, POSENC_ROUNDING_NONE, POSENC_ROUNDING_NONE, POSENC_ROUNDING_NONE}};

}  // namespace

extern "C" {

const posenc_plugin_info* posenc_plugin_query(void) { return &kInfo; }

posenc_status posenc_rope_apply(const posenc_rope_params* a, posenc_dtype dtype, int64_t n_tokens, int64_t n_heads,
                                const int64_t* positions, const void* x, int64_t x_token_stride, int64_t x_head_stride,
                                void* y, int64_t y_token_stride, int64_t y_head_stride) {
  if (!a || n_tokens < 0 || n_heads < 1) return POSENC_INVALID_PARAMETERS;
  return guarded([&] {
    const Format f = plugin::from_abi(dtype);
    const RopeParams p = plugin::from_abi(*a);
    validate(p);
    if (n_tokens > 0 && (!positions || !x || !y)) throw InvalidParameter("positions, x, y", "null", "non-null pointers");
    // Strides and aliasing (SPEC.md section 8): rows of y disjoint, y either x itself (in place,
    // same strides) or separate from it.
    const StridedView x_view{"x", x, n_tokens, n_heads, p.head_dim, x_token_stride, x_head_stride, element_size(f)};
    const StridedView y_view{"y", y, n_tokens, n_heads, p.head_dim, y_token_stride, y_head_stride, element_size(f)};
    check_view(x_view, "x_token_stride", "x_head_stride", false);
    check_view(y_view, "y_token_stride", "y_head_stride", true);
    if (x != y || x_token_stride != y_token_stride || x_head_stride != y_head_stride) check_disjoint(x_view, y_view);
    const auto axes = static_cast<std::size_t>(p.position_axes());
    const auto d = static_cast<std::size_t>(p.head_dim);
    for (int64_t t = 0; t < n_tokens; ++t) {
      std::span<const std::int64_t> pos(positions + static_cast<std::size_t>(t) * axes, axes);
      for (int64_t h = 0; h < n_heads; ++h) {
        std::vector<double> v(d);
        const auto in = static_cast<std::size_t>(t * x_token_stride + h * x_head_stride);
        for (std::size_t j = 0; j < d; ++j) v[j] = get(x, f, in + j);
        const auto& r = rope_rotations.get(p, pos, v, [&] { return reference::rope_rotate(p, pos, v); });
        const auto at = static_cast<std::size_t>(t * y_token_stride + h * y_head_stride);
        for (std::size_t j = 0; j < d; ++j) put(r[j], f, y, at + j);
      }
    }
  });
}

posenc_status posenc_rope_table(const posenc_rope_params* a, posenc_dtype dtype, int64_t n_positions,
                                const int64_t* positions, void* out) {
  if (!a || n_positions < 0) return POSENC_INVALID_PARAMETERS;
  return guarded([&] {
    const Format f = plugin::from_abi(dtype);
    const RopeParams p = plugin::from_abi(*a);
    validate(p);
    const auto axes = static_cast<std::size_t>(p.position_axes());
    for (int64_t i = 0; i < n_positions; ++i) {
      const std::span<const std::int64_t> pos(positions + static_cast<std::size_t>(i) * axes, axes);
      const auto& row = rope_rows.get(p, pos, {}, [&] { return reference::rope_table_row(p, pos); });
      for (std::size_t j = 0; j < row.size(); ++j) put(row[j], f, out, static_cast<std::size_t>(i) * row.size() + j);
    }
  });
}

posenc_status posenc_rope_frequencies(const posenc_rope_params* a, double* inv_freq, double* attention_factor) {
  if (!a) return POSENC_INVALID_PARAMETERS;
  return guarded([&] {
    const auto f = reference::rope_frequencies(plugin::from_abi(*a));
    for (std::size_t i = 0; i + 1 < f.size(); ++i) inv_freq[i] = f[i].f64();
    *attention_factor = f.back().f64();
  });
}

posenc_status posenc_sinusoidal_table(const posenc_sinusoidal_params* a, posenc_dtype dtype, int64_t n_positions,
                                      const int64_t* positions, void* out) {
  if (!a || n_positions < 0) return POSENC_INVALID_PARAMETERS;
  return guarded([&] {
    const Format f = plugin::from_abi(dtype);
    const SinusoidalParams p = plugin::from_abi(*a);
    for (int64_t i = 0; i < n_positions; ++i) {
      const auto& row = sinusoidal_rows.get(p, {positions + i, 1}, {}, [&] { return reference::sinusoidal_row(p, positions[i]); });
      for (std::size_t j = 0; j < row.size(); ++j) put(row[j], f, out, static_cast<std::size_t>(i) * row.size() + j);
    }
  });
}

posenc_status posenc_sinusoidal_embed(const posenc_sinusoidal_params* a, posenc_dtype dtype, int64_t n_positions,
                                      const int64_t* positions, const void* x, void* out) {
  if (!a || n_positions < 0) return POSENC_INVALID_PARAMETERS;
  return guarded([&] {
    const Format f = plugin::from_abi(dtype);
    const SinusoidalParams p = plugin::from_abi(*a);
    validate(p);
    const auto d = static_cast<std::size_t>(p.d_model);
    for (int64_t i = 0; i < n_positions; ++i) {
      std::vector<double> v(d);
      for (std::size_t j = 0; j < d; ++j) v[j] = get(x, f, static_cast<std::size_t>(i) * d + j);
      const auto& row =
          sinusoidal_embeddings.get(p, {positions + i, 1}, v, [&] { return reference::sinusoidal_embed(p, positions[i], v); });
      for (std::size_t j = 0; j < d; ++j) put(row[j], f, out, static_cast<std::size_t>(i) * d + j);
    }
  });
}

posenc_status posenc_alibi_slopes(const posenc_alibi_params* a, posenc_dtype dtype, void* out) {
  if (!a) return POSENC_INVALID_PARAMETERS;
  return guarded([&] {
    const Format f = plugin::from_abi(dtype);
    const auto s = reference::alibi_slopes(plugin::from_abi(*a));
    for (std::size_t h = 0; h < s.size(); ++h) put(s[h], f, out, h);
  });
}

posenc_status posenc_alibi_bias(const posenc_alibi_params* a, posenc_dtype dtype, int64_t n_queries,
                                const int64_t* query_positions, int64_t n_keys, const int64_t* key_positions,
                                void* out) {
  if (!a || n_queries < 0 || n_keys < 0) return POSENC_INVALID_PARAMETERS;
  return guarded([&] {
    const Format f = plugin::from_abi(dtype);
    const AlibiParams p = plugin::from_abi(*a);
    validate(p);
    std::size_t k = 0;
    for (int64_t h = 0; h < p.n_heads; ++h) {
      for (int64_t i = 0; i < n_queries; ++i) {
        for (int64_t j = 0; j < n_keys; ++j) put(reference::alibi_bias(p, h, query_positions[i], key_positions[j]), f, out, k++);
      }
    }
  });
}

posenc_status posenc_learned_lookup(int64_t max_positions, int64_t dim, posenc_dtype dtype, const void* table,
                                    int64_t n_positions, const int64_t* positions, void* out) {
  if (n_positions < 0) return POSENC_INVALID_PARAMETERS;
  return guarded([&] {
    const Format f = plugin::from_abi(dtype);
    const LearnedParams p{max_positions, dim};
    validate(p);
    for (int64_t i = 0; i < n_positions; ++i) validate_learned_position(p, positions[i]);
    const auto d = static_cast<std::size_t>(dim);
    for (int64_t i = 0; i < n_positions; ++i) {
      for (std::size_t j = 0; j < d; ++j) {
        const double v = get(table, f, static_cast<std::size_t>(positions[i]) * d + j);
        std::uint64_t bits = *exact_bits(f, v);
        std::memcpy(static_cast<unsigned char*>(out) + (static_cast<std::size_t>(i) * d + j) * element_size(f), &bits,
                    element_size(f));
      }
    }
  });
}

posenc_status posenc_attention(const posenc_attention_params* a, posenc_dtype dtype, int64_t n_queries, int64_t n_keys,
                               const int64_t* query_positions, const int64_t* key_positions, const void* q,
                               int64_t q_token_stride, int64_t q_head_stride, const void* k, int64_t k_token_stride,
                               int64_t k_head_stride, const void* v, int64_t v_token_stride, int64_t v_head_stride,
                               const uint8_t* mask, const void* table, void* o, int64_t o_token_stride,
                               int64_t o_head_stride, void* lse, int64_t lse_token_stride, int64_t lse_head_stride) {
  if (!a) return POSENC_INVALID_PARAMETERS;
  return guarded([&] {
    const Format f = plugin::from_abi(dtype);
    const AttentionParams p = plugin::from_abi(*a);
    validate(p, n_queries, n_keys);
    // The binary64 scale handed over with a definition is that definition's rounding: a caller
    // that says otherwise would have a plugin that reads `scale` and one that forms it disagree.
    if (!p.scale && a->scale != reference::attention_scale(p).f64()) {
      throw InvalidParameter("attention.scale", std::to_string(a->scale),
                             "the binary64 nearest to the scale its scale_fields define");
    }
    const auto axes = p.position_axes();
    const bool explicit_mask = p.mask == AttentionMask::explicit_;
    for (const auto& [name, pointer] : {std::pair<const char*, const void*>{"query_positions", query_positions},
                                        {"key_positions", key_positions}, {"q", q}, {"k", k}, {"v", v}, {"o", o}}) {
      check_pointer(name, pointer, true, "");
    }
    check_pointer("mask", mask, explicit_mask, "unless the mask is explicit");
    check_pointer("table", table, p.rope_table_given, "unless rope_table_given");
    // Strides and aliasing (SPEC.md section 8): the inputs may share memory (a fused QKV
    // buffer); O's rows and L's are disjoint, and neither shares memory with an input or the other.
    const std::size_t size = element_size(f);
    const StridedView q_view{"q", q, n_queries, p.query_heads, p.head_dim, q_token_stride, q_head_stride, size};
    const StridedView k_view{"k", k, n_keys, p.kv_heads, p.head_dim, k_token_stride, k_head_stride, size};
    const StridedView v_view{"v", v, n_keys, p.kv_heads, p.value_dim, v_token_stride, v_head_stride, size};
    const StridedView o_view{"o", o, n_queries, p.query_heads, p.value_dim, o_token_stride, o_head_stride, size};
    const StridedView lse_view{"lse", lse, n_queries, p.query_heads, 1, lse_token_stride, lse_head_stride, size};
    check_view(q_view, "q_token_stride", "q_head_stride", false);
    check_view(k_view, "k_token_stride", "k_head_stride", false);
    check_view(v_view, "v_token_stride", "v_head_stride", false);
    check_view(o_view, "o_token_stride", "o_head_stride", true);
    const std::int64_t pairs = p.rope ? p.rope->pair_count() : 0;
    std::vector<StridedView> inputs{q_view, k_view, v_view,
                                    flat("query_positions", query_positions, n_queries * axes, sizeof(int64_t)),
                                    flat("key_positions", key_positions, n_keys * axes, sizeof(int64_t))};
    if (mask) inputs.push_back(flat("mask", mask, n_queries * n_keys, 1));
    if (table) inputs.push_back(flat("table", table, (n_queries + n_keys) * 2 * pairs, size));
    std::vector<StridedView> outputs{o_view};
    if (lse) {
      check_view(lse_view, "lse_token_stride", "lse_head_stride", true);
      check_disjoint(o_view, lse_view);
      outputs.push_back(lse_view);
    }
    for (const auto& out : outputs) {
      for (const auto& in : inputs) check_disjoint(out, in);
    }
    const std::vector<double> qs = gather(q_view, f), ks = gather(k_view, f), vs = gather(v_view, f);
    const std::vector<double> ts = table ? gather(flat("table", table, (n_queries + n_keys) * 2 * pairs, size), f)
                                         : std::vector<double>{};
    AttentionInputs in;
    in.queries = n_queries;
    in.keys = n_keys;
    in.query_positions = {query_positions, static_cast<std::size_t>(n_queries * axes)};
    in.key_positions = {key_positions, static_cast<std::size_t>(n_keys * axes)};
    in.q = qs;
    in.k = ks;
    in.v = vs;
    if (mask) in.mask = {mask, static_cast<std::size_t>(n_queries * n_keys)};
    in.table = ts;
    // The memory's key: the positions and every input value, the mask's among them (the suite
    // asks once per format with the same inputs).
    std::vector<std::int64_t> positions{n_queries};
    positions.insert(positions.end(), in.query_positions.begin(), in.query_positions.end());
    positions.insert(positions.end(), in.key_positions.begin(), in.key_positions.end());
    std::vector<double> values(qs);
    values.insert(values.end(), ks.begin(), ks.end());
    values.insert(values.end(), vs.begin(), vs.end());
    values.insert(values.end(), in.mask.begin(), in.mask.end());
    values.insert(values.end(), ts.begin(), ts.end());
    const auto& r = attentions.get(p, positions, values, [&] { return reference::attention(p, in).values; });
    const auto heads = static_cast<std::size_t>(p.query_heads), dv = static_cast<std::size_t>(p.value_dim);
    for (std::size_t i = 0; i < static_cast<std::size_t>(n_queries); ++i) {
      for (std::size_t h = 0; h < heads; ++h) {
        const std::size_t row = i * heads + h;
        const auto at = static_cast<std::size_t>(static_cast<std::int64_t>(i) * o_token_stride +
                                                 static_cast<std::int64_t>(h) * o_head_stride);
        for (std::size_t e = 0; e < dv; ++e) put(r[row * dv + e], f, o, at + e);
        if (lse) {
          put(r[static_cast<std::size_t>(n_queries) * heads * dv + row], f, lse,
              static_cast<std::size_t>(static_cast<std::int64_t>(i) * lse_token_stride +
                                       static_cast<std::int64_t>(h) * lse_head_stride));
        }
      }
    }
  });
}

}  // extern "C"
