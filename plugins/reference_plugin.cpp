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

// Working formats left at the default: it is exact, and its reports must match the in-process
// reference's, which declares none.
const posenc_plugin_info kInfo{POSENC_PLUGIN_ABI_VERSION, "posenc reference through the C ABI", "1",
                               POSENC_CAP_ROPE | POSENC_CAP_SINUSOIDAL | POSENC_CAP_ALIBI | POSENC_CAP_LEARNED,
                               {POSENC_WORKING_DEFAULT, POSENC_WORKING_DEFAULT, POSENC_WORKING_DEFAULT,
                                POSENC_WORKING_DEFAULT}};

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

}  // extern "C"
