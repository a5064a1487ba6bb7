// libFuzzer target: the built-in implementation's C ABI entry points (the reference plugin) with
// random parameter structs (NaN and infinite reals, out-of-range enums, negative and huge sizes,
// missing or inconsistent scaling fields), random sizes and random strides. Buffers are exactly
// as large as the sizes and strides would need if they were valid, so an entry point that
// accepts a bad layout reads or writes outside them and the sanitizers report it. Every call
// must return one of the three statuses.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <vector>

#include "posenc/plugin.h"

namespace {

class Bytes {
 public:
  Bytes(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  std::uint64_t bits(int n) {
    std::uint64_t v = 0;
    for (int i = 0; i < n; ++i) v = v << 8 | (at_ < size_ ? data_[at_++] : 0);
    return v;
  }
  // Mostly small values around the interesting range, sometimes extreme ones.
  std::int64_t integer(std::int64_t lo, std::int64_t hi) {
    switch (bits(1) % 8) {
      case 0: return static_cast<std::int64_t>(bits(8));
      case 1: return -static_cast<std::int64_t>(bits(1));
      default: return lo + static_cast<std::int64_t>(bits(2) % static_cast<std::uint64_t>(hi - lo + 1));
    }
  }
  double real(double typical) {
    constexpr double specials[] = {0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 1e300, -1e300, 5e-324,
                                   std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                                   std::numeric_limits<double>::quiet_NaN()};
    switch (bits(1) % 6) {
      case 0: return specials[bits(1) % std::size(specials)];
      case 1: {
        const std::uint64_t b = bits(8);
        double v;
        static_assert(sizeof v == sizeof b);
        __builtin_memcpy(&v, &b, sizeof v);
        return v;
      }
      default: return typical * (1 + static_cast<double>(bits(1)) / 64);
    }
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_, at_ = 0;
};

void check(posenc_status s) {
  if (s != POSENC_OK && s != POSENC_INVALID_PARAMETERS && s != POSENC_UNSUPPORTED) std::abort();
}

// Elements a [outer][inner][row] view spans with its negative strides taken as 0: exactly what
// a valid layout needs, and for an invalid one (negative or overlapping strides) a real buffer
// the entry point must refuse rather than overrun. 0 when the sizes are too large to back (the
// pointer passed is then null, which must be refused too).
std::size_t extent(std::int64_t outer, std::int64_t inner, std::int64_t row, std::int64_t outer_stride,
                   std::int64_t inner_stride) {
  if (outer <= 0 || inner <= 0 || row <= 0 || row > 4096 || outer > 64 || inner > 64) return 0;
  if (outer_stride > 1 << 16 || inner_stride > 1 << 16) return 0;
  return static_cast<std::size_t>((outer - 1) * std::max<std::int64_t>(outer_stride, 0) +
                                  (inner - 1) * std::max<std::int64_t>(inner_stride, 0) + row);
}

posenc_rope_params rope_params(Bytes& in, std::vector<double>& factors) {
  posenc_rope_params p{};
  p.head_dim = in.integer(0, 66);
  p.rotary_dim = in.integer(0, 66);
  p.base = in.real(10000);
  p.layout = static_cast<int32_t>(in.integer(0, 2));
  p.partial = static_cast<int32_t>(in.integer(0, 2));
  p.inverse = static_cast<int32_t>(in.bits(1) % 2);
  p.n_axes = static_cast<int32_t>(in.integer(0, 5));
  for (auto& s : p.mrope_section) s = in.integer(0, 33);
  posenc_rope_scaling& s = p.scaling;
  s.kind = static_cast<int32_t>(in.integer(0, 7));
  s.fields = static_cast<uint32_t>(in.bits(2));
  s.factor = in.real(4);
  s.original_max_positions = in.integer(0, 9000);
  s.seq_len = in.integer(0, 20000);
  s.beta_fast = in.real(32);
  s.beta_slow = in.real(1);
  s.truncate = static_cast<int32_t>(in.integer(0, 2));
  s.mscale = in.real(1);
  s.mscale_all_dim = in.real(1);
  s.attention_factor = in.real(1);
  s.low_freq_factor = in.real(1);
  s.high_freq_factor = in.real(4);
  // The arrays really have the lengths the struct claims (the ABI's contract).
  s.n_short_factor = in.integer(0, 34) % 40;
  s.n_long_factor = in.integer(0, 34) % 40;
  if (s.n_short_factor < 0) s.n_short_factor = 0;
  if (s.n_long_factor < 0) s.n_long_factor = 0;
  factors.resize(static_cast<std::size_t>(s.n_short_factor + s.n_long_factor) + 1);
  for (auto& f : factors) f = in.real(1.5);
  s.short_factor = factors.data();
  s.long_factor = factors.data() + s.n_short_factor;
  return p;
}

// posenc_attention with fuzzed parameters, sizes and strides: each tensor's buffer exactly as large
// as its layout needs (or null when it cannot be backed), the rope's head_dim often the
// attention's and the scale often given, so that valid calls are reached too.
void attention(Bytes& in, posenc_dtype dtype, const std::vector<std::int64_t>& positions) {
  constexpr std::size_t element = 8;
  std::vector<double> factors;
  posenc_rope_params rope = rope_params(in, factors);
  const posenc_alibi_params alibi{in.integer(0, 6), static_cast<int32_t>(in.integer(0, 2))};
  posenc_attention_params p{};
  p.head_dim = in.integer(0, 9);
  p.value_dim = in.integer(0, 9);
  p.query_heads = in.integer(0, 5);
  p.kv_heads = in.integer(0, 5);
  if (in.bits(1) % 2) rope.head_dim = p.head_dim;
  const std::uint64_t encodings = in.bits(1);
  p.rope = encodings & 1 ? &rope : nullptr;
  p.alibi = encodings & 2 ? &alibi : nullptr;
  p.rope_table_given = static_cast<int32_t>(in.integer(0, 2));
  p.mask = static_cast<int32_t>(in.integer(0, 3));
  p.scale = in.real(0.25);
  p.scale_denominator = in.real(64);
  p.scale_mscale_all_dim = in.real(1);
  p.scale_fields = in.bits(1) % 2 ? uint32_t{POSENC_SCALE_GIVEN} : static_cast<uint32_t>(in.bits(1));
  const std::int64_t nq = in.integer(0, 3), nk = in.integer(0, 4);
  std::int64_t strides[10];
  for (auto& stride : strides) stride = in.integer(0, 40);
  const std::int64_t heads = p.query_heads, kv = p.kv_heads;
  auto buffer = [&](std::int64_t outer, std::int64_t inner, std::int64_t row, std::int64_t outer_stride,
                    std::int64_t inner_stride) { return std::vector<unsigned char>(extent(outer, inner, row, outer_stride, inner_stride) * element); };
  auto data = [](std::vector<unsigned char>& b) { return b.empty() ? nullptr : b.data(); };
  std::vector<unsigned char> q = buffer(nq, heads, p.head_dim, strides[0], strides[1]),
                             k = buffer(nk, kv, p.head_dim, strides[2], strides[3]),
                             v = buffer(nk, kv, p.value_dim, strides[4], strides[5]),
                             o = buffer(nq, heads, p.value_dim, strides[6], strides[7]),
                             lse = buffer(nq, heads, 1, strides[8], strides[9]);
  const bool small = nq >= 0 && nq <= 3 && nk >= 0 && nk <= 4;
  std::vector<std::uint8_t> mask(small ? static_cast<std::size_t>(std::max<std::int64_t>(nq * nk, 1)) : 0, 1);
  // At most head_dim / 2 pairs (66 / 2) per token.
  std::vector<unsigned char> table(small ? static_cast<std::size_t>(nq + nk) * 66 * element : 0);
  const bool without_lse = in.bits(1) % 2;
  check(posenc_attention(&p, dtype, nq, nk, positions.data(), positions.data() + 128, data(q), strides[0], strides[1],
                         data(k), strides[2], strides[3], data(v), strides[4], strides[5],
                         p.mask == POSENC_MASK_EXPLICIT && !mask.empty() ? mask.data() : nullptr,
                         p.rope_table_given && !table.empty() ? table.data() : nullptr, data(o), strides[6], strides[7],
                         without_lse ? nullptr : data(lse), strides[8], strides[9]));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Bytes in(data, size);
  const auto dtype = static_cast<posenc_dtype>(in.integer(0, 4));
  const std::size_t element = 8;  // buffers sized for the widest format
  std::vector<std::int64_t> positions(64 * 4);
  for (auto& p : positions) p = in.integer(-5, 100000);
  // The entry point: attention for a selector of 250 and above, which leaves the seeds and past
  // crash inputs of the other entry points on the paths they were recorded on.
  const std::uint64_t selector = in.bits(1);
  if (selector >= 250) {
    attention(in, dtype, positions);
    return 0;
  }
  switch (selector % 5) {
    case 0: {
      std::vector<double> factors;
      const posenc_rope_params p = rope_params(in, factors);
      const std::int64_t tokens = in.integer(0, 3), heads = in.integer(0, 3);
      const std::int64_t xt = in.integer(0, 140), xh = in.integer(0, 70), yt = in.integer(0, 140), yh = in.integer(0, 70);
      const bool in_place = in.bits(1) % 2;
      std::vector<unsigned char> x(extent(tokens, heads, p.head_dim, xt, xh) * element);
      std::vector<unsigned char> y(extent(tokens, heads, p.head_dim, yt, yh) * element);
      // In place: y is x, with y's strides (different ones must be refused).
      unsigned char* x_data = x.empty() ? nullptr : x.data();
      unsigned char* y_data = in_place ? (extent(tokens, heads, p.head_dim, yt, yh) <= x.size() / element ? x_data : nullptr)
                                       : (y.empty() ? nullptr : y.data());
      check(posenc_rope_apply(&p, dtype, tokens, heads, positions.data(), x_data, xt, xh, y_data, yt, yh));
      break;
    }
    case 1: {
      std::vector<double> factors;
      const posenc_rope_params p = rope_params(in, factors);
      std::vector<double> inv_freq(static_cast<std::size_t>(p.head_dim > 0 && p.head_dim <= 66 ? p.head_dim : 0) / 2 + 1);
      double attention = 0;
      // The output holds rotary pairs for any valid parameters (at most head_dim / 2).
      if (p.head_dim > 0 && p.head_dim <= 66) check(posenc_rope_frequencies(&p, inv_freq.data(), &attention));
      break;
    }
    case 2: {
      posenc_sinusoidal_params p{in.integer(0, 66), in.real(10000), static_cast<int32_t>(in.integer(0, 2)),
                                 static_cast<int32_t>(in.integer(0, 2))};
      const std::int64_t n = in.integer(0, 4);
      std::vector<unsigned char> out(p.d_model > 0 && p.d_model <= 66 && n > 0 && n <= 64 ? static_cast<std::size_t>(n * p.d_model) * element : 0);
      check(posenc_sinusoidal_table(&p, dtype, out.empty() ? std::min<std::int64_t>(n, 0) : n, positions.data(), out.data()));
      break;
    }
    case 3: {
      posenc_alibi_params p{in.integer(0, 70), static_cast<int32_t>(in.integer(0, 2))};
      const std::int64_t nq = in.integer(0, 3), nk = in.integer(0, 3);
      const bool fits = p.n_heads > 0 && p.n_heads <= 70 && nq >= 0 && nq <= 64 && nk >= 0 && nk <= 64;
      std::vector<unsigned char> out(fits ? static_cast<std::size_t>(p.n_heads * std::max<std::int64_t>(nq * nk, 1)) * element : 0);
      if (fits) check(posenc_alibi_slopes(&p, dtype, out.data()));
      check(posenc_alibi_bias(&p, dtype, fits ? nq : 0, positions.data(), fits ? nk : 0, positions.data() + 64, out.data()));
      break;
    }
    case 4: {
      const std::int64_t rows = in.integer(0, 8), dim = in.integer(0, 8), n = in.integer(0, 4);
      const bool fits = rows > 0 && rows <= 8 && dim > 0 && dim <= 8 && n >= 0 && n <= 64;
      std::vector<unsigned char> table(fits ? static_cast<std::size_t>(rows * dim) * element : 0);
      std::vector<unsigned char> out(fits ? static_cast<std::size_t>(std::max<std::int64_t>(n, 1) * dim) * element : 0);
      check(posenc_learned_lookup(rows, dim, dtype, table.data(), fits ? n : 0, positions.data(), out.data()));
      break;
    }
  }
  return 0;
}
