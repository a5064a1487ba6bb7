#include "plugin_cases.hpp"

#include <cmath>
#include <cstring>
#include <optional>

#include "posenc/abi/convert.hpp"
#include "posenc/reference/reference.hpp"
#include "posenc/reference/rounding.hpp"
#include "posenc/vectors/case_types.hpp"

namespace posenc::conformance {
namespace {

std::size_t element_size(Format f) { return static_cast<std::size_t>(spec(f).width) / 8; }

// Doubles stored in format f (little-endian); nothing if some value is not exactly representable there.
std::optional<std::vector<unsigned char>> stored(const std::vector<double>& values, Format f) {
  std::vector<unsigned char> bytes(values.size() * element_size(f));
  for (std::size_t i = 0; i < values.size(); ++i) {
    const auto bits = exact_bits(f, values[i]);
    if (!bits) return std::nullopt;
    std::memcpy(bytes.data() + i * element_size(f), &*bits, element_size(f));
  }
  return bytes;
}

std::vector<double> load(const std::vector<unsigned char>& bytes, Format f) {
  std::vector<double> out(bytes.size() / element_size(f));
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, bytes.data() + i * element_size(f), element_size(f));
    out[i] = to_double(f, bits);
  }
  return out;
}

// Correct rounding of a value the suite formed itself from the plugin's outputs. A NaN or an
// infinity (from outputs the plugin never wrote, or overflowed) is no real number to round: it
// stays what it is, and the comparison fails it.
double round_to(Format f, long double v) {
  if (!std::isfinite(v)) return static_cast<double>(v);
  return to_double(f, ref::round_to_format(ref::MpfrReal<60>(v), f));
}

// The dot product of y's two halves (the rotated q and k, or two table rows), formed by the suite
// in extended precision and rounded once to f (SPEC.md section 8): logits and sinusoidal dot
// products are not ABI calls.
double dot_of_halves(const std::vector<double>& y, Format f) {
  const std::size_t n = y.size() / 2;
  long double sum = 0;
  for (std::size_t i = 0; i < n; ++i) sum += static_cast<long double>(y[i]) * y[n + i];
  return round_to(f, sum);
}

// The output rows as they are, or (a dot case) the dot product of the two.
std::function<std::vector<double>(const Outputs&)> rows_or_their_dot(Format f, bool dot) {
  return [f, dot](const Outputs& out) {
    const auto y = load(out.at(0), f);
    return dot ? std::vector<double>{dot_of_halves(y, f)} : y;
  };
}

Outcome unsupported(const std::string& why, NotJudged reason) { return {Status::unsupported, {}, why, false, reason}; }

// a * b * c, or nothing when a factor is negative or the product overflows: sizes of an invalid
// case's tensors that no buffer could have.
std::optional<std::size_t> elements(std::int64_t a, std::int64_t b, std::int64_t c = 1) {
  std::int64_t ab = 0, abc = 0;
  if (a < 0 || b < 0 || c < 0 || __builtin_mul_overflow(a, b, &ab) || __builtin_mul_overflow(ab, c, &abc)) return std::nullopt;
  return static_cast<std::size_t>(abc);
}

// Whether a call left an output as the suite pre-filled it (all-ones bytes, plugin_call.cpp):
// never written.
bool untouched(const std::vector<unsigned char>& bytes) {
  for (const unsigned char b : bytes) {
    if (b != 0xff) return false;
  }
  return true;
}

// The softmax scale a plugin is handed: SPEC.md section 2.7's scale rounded to binary64. The
// parameters of an invalid case may have none; the plugin must refuse those anyway.
double binary64_scale(const AttentionParams& p) {
  try {
    return reference::attention_scale(p).f64();
  } catch (const InvalidParameter&) {
    return p.scale.value_or(NAN);
  }
}

}  // namespace

std::variant<Outcome, PreparedCall> prepare(const VectorGroup& g, const VectorCase& c, Format f, std::uint32_t exports) {
  using Prepared = std::variant<Outcome, PreparedCall>;
  const auto not_representable = unsupported("inputs not representable in " + std::string(to_string(f)), NotJudged::not_representable);
  const auto wrong_length = unsupported("inputs of the wrong length cannot be passed through the ABI", NotJudged::not_representable);
  // A call of `entry` in f, or why there is none.
  const auto call_of = [&](EntryPoint entry) -> std::optional<PreparedCall> {
    if (!(exports & bit_of(entry))) return std::nullopt;
    PreparedCall call;
    call.tc_id = c.tc_id;
    call.request.entry = entry;
    call.request.dtype = plugin::to_abi(f);
    return call;
  };
  const auto no_entry = [](EntryPoint entry) { return unsupported(std::string("no ") + symbol_of(entry), NotJudged::no_entry_point); };
  const auto decoded = [f](const Outputs& out) { return load(out.at(0), f); };
  const auto bytes = [f](std::size_t n) { return n * element_size(f); };
  const auto size = [](std::span<const std::int64_t> s) { return static_cast<std::int64_t>(s.size()); };

  // Rotation and logit: a logit is q and k rotated as two tokens of one call, then their dot
  // product. The ABI passes no lengths for x or positions (the parameters imply them), so inputs
  // of another length cannot be put to a plugin.
  const auto rotation = [&](const RopeParams& p, std::vector<std::int64_t> pos, std::vector<double> x,
                            bool dot) -> Prepared {
    auto call = call_of(EntryPoint::rope_apply);
    if (!call) return no_entry(EntryPoint::rope_apply);
    auto in = stored(x, f);
    if (!in) return not_representable;
    Request& r = call->request;
    r.rope = plugin::to_abi(p);  // its factor arrays point into g
    const std::int64_t n = p.head_dim;  // the token stride; one head per token
    r.counts = {dot ? 2 : 1, 1, n, n, n, n};
    r.output_bytes = {bytes(x.size())};
    r.positions = {std::move(pos)};
    r.inputs = {std::move(*in)};
    call->derived = dot;
    call->values = rows_or_their_dot(f, dot);
    return std::move(*call);
  };
  // Table rows at the positions, or (a sinusoidal dot product) the dot product of two of them.
  const auto sinusoidal_rows = [&](const cases::SinusoidalRow& row, std::vector<std::int64_t> pos, bool dot) -> Prepared {
    auto call = call_of(EntryPoint::sinusoidal_table);
    if (!call) return no_entry(EntryPoint::sinusoidal_table);
    Request& r = call->request;
    r.sinusoidal = plugin::to_abi(row.p);
    r.counts = {static_cast<std::int64_t>(pos.size())};
    r.output_bytes = {bytes(row.outputs() * pos.size())};
    r.positions = {std::move(pos)};
    call->derived = dot;
    call->values = rows_or_their_dot(f, dot);
    return std::move(*call);
  };

  return std::visit(overloaded{
      [&](const cases::RopeRotate& k) -> Prepared {
        if (k.x.size() != k.outputs() || size(k.position) != k.p.position_axes()) return wrong_length;
        return rotation(k.p, {k.position.begin(), k.position.end()}, {k.x.begin(), k.x.end()}, false);
      },
      [&](const cases::RopeDot& k) -> Prepared {
        const std::size_t head = cases::RopeRotate{k.p, k.q_position, k.q}.outputs();
        if (k.q.size() != head || k.k.size() != head || size(k.q_position) != k.p.position_axes() ||
            size(k.k_position) != k.p.position_axes())
          return wrong_length;
        std::vector<double> x(k.q.begin(), k.q.end());
        x.insert(x.end(), k.k.begin(), k.k.end());
        std::vector<std::int64_t> pos(k.q_position.begin(), k.q_position.end());
        pos.insert(pos.end(), k.k_position.begin(), k.k_position.end());
        return rotation(k.p, std::move(pos), std::move(x), true);
      },
      [&](const cases::RopeTable& k) -> Prepared {
        if (size(k.position) != k.p.position_axes()) return wrong_length;
        auto call = call_of(EntryPoint::rope_table);
        if (!call) return no_entry(EntryPoint::rope_table);
        Request& r = call->request;
        r.rope = plugin::to_abi(k.p);
        r.counts = {1};
        r.positions = {{k.position.begin(), k.position.end()}};
        r.output_bytes = {bytes(k.outputs())};
        call->values = decoded;
        return std::move(*call);
      },
      [&](const cases::RopeFrequencies& k) -> Prepared {
        auto call = call_of(EntryPoint::rope_frequencies);
        if (!call) return no_entry(EntryPoint::rope_frequencies);
        Request& r = call->request;
        r.rope = plugin::to_abi(k.p);
        r.output_bytes = {(k.outputs() - 1) * sizeof(double), sizeof(double)};  // binary64 by the ABI
        call->values = [f](const Outputs& out) {
          std::vector<double> y;
          for (const double v : load(out.at(0), Format::f64)) y.push_back(round_to(f, v));
          y.push_back(round_to(f, load(out.at(1), Format::f64).at(0)));
          return y;
        };
        return std::move(*call);
      },
      [&](const cases::SinusoidalRow& k) -> Prepared { return sinusoidal_rows(k, {k.position}, false); },
      [&](const cases::SinusoidalDot& k) -> Prepared {
        return sinusoidal_rows(cases::SinusoidalRow{k.p, k.a}, {k.a, k.b}, true);
      },
      [&](const cases::SinusoidalEmbed& k) -> Prepared {
        if (k.x.size() != k.outputs()) return wrong_length;
        auto call = call_of(EntryPoint::sinusoidal_embed);
        if (!call) return no_entry(EntryPoint::sinusoidal_embed);
        auto in = stored({k.x.begin(), k.x.end()}, f);
        if (!in) return not_representable;
        Request& r = call->request;
        r.sinusoidal = plugin::to_abi(k.p);
        r.counts = {1};
        r.positions = {{k.position}};
        r.inputs = {std::move(*in)};
        r.output_bytes = {bytes(k.x.size())};
        call->values = decoded;
        return std::move(*call);
      },
      [&](const cases::AlibiSlopes& k) -> Prepared {
        auto call = call_of(EntryPoint::alibi_slopes);
        if (!call) return no_entry(EntryPoint::alibi_slopes);
        call->request.alibi = plugin::to_abi(k.p);
        call->request.output_bytes = {bytes(k.outputs())};
        call->values = decoded;
        return std::move(*call);
      },
      [&](const cases::AlibiBias& k) -> Prepared {
        auto call = call_of(EntryPoint::alibi_bias);
        if (!call) return no_entry(EntryPoint::alibi_bias);
        // The ABI computes every head; a head index is the suite's own choice, not the plugin's.
        if (k.head < 0 || k.head >= k.p.n_heads) return unsupported("the ABI takes no head index", NotJudged::no_entry_point);
        Request& r = call->request;
        r.alibi = plugin::to_abi(k.p);
        r.counts = {1, 1};
        r.positions = {{k.query}, {k.key}};
        r.output_bytes = {bytes(cases::AlibiSlopes{k.p}.outputs())};
        call->values = [f, head = static_cast<std::size_t>(k.head)](const Outputs& out) {
          return std::vector<double>{load(out.at(0), f).at(head)};
        };
        return std::move(*call);
      },
      [&](const cases::Attention& k) -> Prepared {
        const AttentionParams& p = k.p;
        const AttentionInputs& in = k.in;
        // The tensors contiguous ([token][head][row]) and of the lengths the parameters give:
        // others (an invalid case's) have no layout to pass.
        const auto axes = p.rope ? p.rope->position_axes() : 1;
        const auto pairs = p.rope ? p.rope->pair_count() : 0;
        const auto n_q = elements(in.queries, p.query_heads, p.head_dim), n_k = elements(in.keys, p.kv_heads, p.head_dim),
                   n_v = elements(in.keys, p.kv_heads, p.value_dim), n_o = elements(in.queries, p.query_heads, p.value_dim),
                   n_l = elements(in.queries, p.query_heads), n_qp = elements(in.queries, axes),
                   n_kp = elements(in.keys, axes), n_mask = elements(in.queries, in.keys),
                   n_table = elements(in.queries + in.keys, 2, pairs);
        if (!n_q || !n_k || !n_v || !n_o || !n_l || !n_qp || !n_kp || !n_mask || !n_table || in.q.size() != *n_q ||
            in.k.size() != *n_k || in.v.size() != *n_v || in.query_positions.size() != *n_qp ||
            in.key_positions.size() != *n_kp ||
            in.mask.size() != (p.mask == AttentionMask::explicit_ ? *n_mask : 0) ||
            in.table.size() != (p.rope_table_given ? *n_table : 0))
          return wrong_length;
        auto call = call_of(EntryPoint::attention);
        if (!call) return no_entry(EntryPoint::attention);
        auto q = stored({in.q.begin(), in.q.end()}, f), key = stored({in.k.begin(), in.k.end()}, f),
             v = stored({in.v.begin(), in.v.end()}, f), table = stored({in.table.begin(), in.table.end()}, f);
        if (!q || !key || !v || !table) return not_representable;
        Request& r = call->request;
        if (p.rope) r.rope = plugin::to_abi(*p.rope);  // its factor arrays point into g
        if (p.alibi) r.alibi = plugin::to_abi(*p.alibi);
        r.attention = plugin::to_abi(p, binary64_scale(p), &r.rope, &r.alibi);
        const std::int64_t H = p.query_heads, G = p.kv_heads, d = p.head_dim, dv = p.value_dim;
        // n_queries, n_keys, then each tensor's token and head strides: q, k, v, O, L.
        r.counts = {in.queries, in.keys, H * d, d, G * d, d, G * dv, dv, H * dv, dv, H, 1};
        r.positions = {{in.query_positions.begin(), in.query_positions.end()},
                       {in.key_positions.begin(), in.key_positions.end()}};
        r.inputs = {std::move(*q), std::move(*key), std::move(*v), {in.mask.begin(), in.mask.end()}, std::move(*table)};
        r.output_bytes = {bytes(*n_o), bytes(*n_l)};
        // O, then L where the call wrote it (SPEC.md section 8): a kernel that forms no L leaves
        // it as it was handed over, and is judged on O alone.
        call->values = [f](const Outputs& out) {
          auto values = load(out.at(0), f);
          if (!untouched(out.at(1))) {
            const auto lse = load(out.at(1), f);
            values.insert(values.end(), lse.begin(), lse.end());
          }
          return values;
        };
        return std::move(*call);
      },
      [&](const cases::LearnedLookup& k) -> Prepared {
        if (k.p.max_positions >= 0 && k.p.dim >= 0 &&
            k.table.size() != static_cast<std::size_t>(k.p.max_positions * k.p.dim))
          return wrong_length;
        auto call = call_of(EntryPoint::learned_lookup);
        if (!call) return no_entry(EntryPoint::learned_lookup);
        auto table = stored({k.table.begin(), k.table.end()}, f);
        if (!table) return not_representable;
        Request& r = call->request;
        r.counts = {k.p.max_positions, k.p.dim, 1};
        r.inputs = {std::move(*table)};
        r.positions = {{k.position}};
        r.output_bytes = {bytes(k.outputs())};
        call->values = decoded;
        return std::move(*call);
      },
  }, typed_case(g, c));
}


Outcome outcome(const PreparedCall& call, CallResult result) {
  const Request& r = call.request;
  const Reply& reply = result.reply;
  bool complete = reply.outputs.size() == r.output_bytes.size();
  for (std::size_t i = 0; complete && i < reply.outputs.size(); ++i) complete = reply.outputs[i].size() == r.output_bytes[i];
  if (result.failure.empty() && !complete) result.failure = "answered with a message the suite cannot read";
  Outcome o;
  const std::string entry = symbol_of(r.entry);
  if (!result.failure.empty()) {
    o = {Status::failed, {}, result.failure + " (tcId " + std::to_string(call.tc_id) + ")"};
    return o;  // as before the split, a call that never answered is not marked derived
  }
  if (!reply.damage.empty()) {
    o = {Status::failed, {}, entry + " " + reply.damage};
  } else {
    switch (reply.status) {
      case POSENC_OK: o = {Status::ok, call.values(reply.outputs), {}}; break;
      case POSENC_INVALID_PARAMETERS: o = {Status::invalid, {}, entry + " refused the parameters"}; break;
      case POSENC_UNSUPPORTED:
        o = {Status::unsupported, {}, entry + " does not support this case", false, NotJudged::refused};
        break;
      default: o = {Status::failed, {}, entry + " returned an unknown status " + std::to_string(reply.status)};
    }
  }
  o.derived = call.derived;
  return o;
}

}  // namespace posenc::conformance
