#include "plugin_cases.hpp"

#include <cmath>
#include <cstring>
#include <optional>

#include "posenc/abi/convert.hpp"
#include "posenc/reference/rounding.hpp"

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

Outcome unsupported(const std::string& why) { return {Status::unsupported, {}, why}; }

std::size_t count(std::int64_t n) { return static_cast<std::size_t>(std::max<std::int64_t>(n, 0)); }

// The ABI passes no lengths for x or positions (the parameters imply them), so a case whose
// inputs have the wrong length cannot be put to a plugin.
bool expressible(const VectorGroup& g, const VectorCase& c) {
  if (const auto* p = std::get_if<RopeParams>(&g.params)) {
    const bool rotate = g.type == CaseType::rope_rotate || g.type == CaseType::rope_dot;
    return (!rotate || c.x.size() == count(p->head_dim)) &&
           (g.type == CaseType::rope_frequencies || c.position.size() == count(p->position_axes()));
  }
  if (const auto* p = std::get_if<SinusoidalParams>(&g.params)) {
    return g.type != CaseType::sinusoidal_embed || c.x.size() == count(p->d_model);
  }
  if (const auto* p = std::get_if<LearnedParams>(&g.params)) {
    return p->max_positions < 0 || p->dim < 0 || g.table.size() == static_cast<std::size_t>(p->max_positions * p->dim);
  }
  return true;
}

std::optional<EntryPoint> entry_for(CaseType t) {
  switch (t) {
    case CaseType::rope_rotate:
    case CaseType::rope_dot: return EntryPoint::rope_apply;
    case CaseType::rope_table: return EntryPoint::rope_table;
    case CaseType::rope_frequencies: return EntryPoint::rope_frequencies;
    case CaseType::sinusoidal_row:
    case CaseType::sinusoidal_dot: return EntryPoint::sinusoidal_table;
    case CaseType::sinusoidal_embed: return EntryPoint::sinusoidal_embed;
    case CaseType::alibi_slopes: return EntryPoint::alibi_slopes;
    case CaseType::alibi_bias: return EntryPoint::alibi_bias;
    case CaseType::learned_lookup: return EntryPoint::learned_lookup;
  }
  return std::nullopt;
}

}  // namespace

std::variant<Outcome, PreparedCall> prepare(const VectorGroup& g, const VectorCase& c, Format f, std::uint32_t exports) {
  if (!expressible(g, c)) return unsupported("inputs of the wrong length cannot be passed through the ABI");
  const std::optional<EntryPoint> entry = entry_for(g.type);
  if (!entry) return unsupported("unknown case type");
  if (!(exports & bit_of(*entry))) return unsupported(std::string("no ") + symbol_of(*entry));
  const auto not_representable = unsupported("inputs not representable in " + std::string(to_string(f)));
  PreparedCall call;
  call.tc_id = c.tc_id;
  Request& r = call.request;
  r.entry = *entry;
  r.dtype = plugin::to_abi(f);
  const auto decoded = [f](const Outputs& out) { return load(out.at(0), f); };
  switch (g.type) {
    case CaseType::rope_rotate:
    case CaseType::rope_dot: {
      r.rope = plugin::to_abi(std::get<RopeParams>(g.params));  // its factor arrays point into g
      const bool dot = g.type == CaseType::rope_dot;
      // A logit is q and k rotated as two tokens of one call, then their dot product.
      std::vector<double> x = c.x;
      std::vector<std::int64_t> pos = c.position;
      if (dot) {
        x.insert(x.end(), c.y.begin(), c.y.end());
        pos.insert(pos.end(), c.position_b.begin(), c.position_b.end());
      }
      auto in = stored(x, f);
      if (!in) return not_representable;
      const auto n = static_cast<std::int64_t>(c.x.size());  // the token stride; one head per token
      r.counts = {dot ? 2 : 1, 1, n, n, n, n};
      r.positions = {pos};
      r.inputs = {std::move(*in)};
      r.output_bytes = {x.size() * element_size(f)};
      call.derived = dot;
      call.values = rows_or_their_dot(f, dot);
      return call;
    }
    case CaseType::rope_table: {
      const auto& rp = std::get<RopeParams>(g.params);
      r.rope = plugin::to_abi(rp);
      r.counts = {1};
      r.positions = {c.position};
      r.output_bytes = {2 * count(rp.pair_count()) * element_size(f)};
      call.values = decoded;
      return call;
    }
    case CaseType::rope_frequencies: {
      const auto& rp = std::get<RopeParams>(g.params);
      r.rope = plugin::to_abi(rp);
      r.output_bytes = {count(rp.pair_count()) * sizeof(double), sizeof(double)};  // binary64 by the ABI
      call.values = [f](const Outputs& out) {
        std::vector<double> y;
        for (const double v : load(out.at(0), Format::f64)) y.push_back(round_to(f, v));
        y.push_back(round_to(f, load(out.at(1), Format::f64).at(0)));
        return y;
      };
      return call;
    }
    case CaseType::sinusoidal_row:
    case CaseType::sinusoidal_dot: {
      const auto& sp = std::get<SinusoidalParams>(g.params);
      r.sinusoidal = plugin::to_abi(sp);
      const bool dot = g.type == CaseType::sinusoidal_dot;
      std::vector<std::int64_t> pos = c.position;
      if (dot) pos.push_back(c.position_b.at(0));
      r.counts = {static_cast<std::int64_t>(pos.size())};
      r.output_bytes = {count(sp.d_model) * pos.size() * element_size(f)};
      r.positions = {std::move(pos)};
      call.derived = dot;
      call.values = rows_or_their_dot(f, dot);
      return call;
    }
    case CaseType::sinusoidal_embed: {
      r.sinusoidal = plugin::to_abi(std::get<SinusoidalParams>(g.params));
      auto in = stored(c.x, f);
      if (!in) return not_representable;
      r.counts = {1};
      r.positions = {c.position};
      r.inputs = {std::move(*in)};
      r.output_bytes = {c.x.size() * element_size(f)};
      call.values = decoded;
      return call;
    }
    case CaseType::alibi_slopes: {
      const auto& ap = std::get<AlibiParams>(g.params);
      r.alibi = plugin::to_abi(ap);
      r.output_bytes = {count(ap.n_heads) * element_size(f)};
      call.values = decoded;
      return call;
    }
    case CaseType::alibi_bias: {
      const auto& ap = std::get<AlibiParams>(g.params);
      // The ABI computes every head; a head index is the suite's own choice, not the plugin's.
      if (c.head < 0 || c.head >= ap.n_heads) return unsupported("the ABI takes no head index");
      r.alibi = plugin::to_abi(ap);
      r.counts = {1, 1};
      r.positions = {{c.query}, {c.key}};
      r.output_bytes = {count(ap.n_heads) * element_size(f)};
      call.values = [f, head = static_cast<std::size_t>(c.head)](const Outputs& out) {
        return std::vector<double>{load(out.at(0), f).at(head)};
      };
      return call;
    }
    case CaseType::learned_lookup: {
      const auto& lp = std::get<LearnedParams>(g.params);
      auto table = stored(g.table, f);
      if (!table) return not_representable;
      r.counts = {lp.max_positions, lp.dim, 1};
      r.inputs = {std::move(*table)};
      r.positions = {c.position};
      r.output_bytes = {count(lp.dim) * element_size(f)};
      call.values = decoded;
      return call;
    }
  }
  return unsupported("unknown case type");
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
      case POSENC_UNSUPPORTED: o = {Status::unsupported, {}, entry + " does not support this case"}; break;
      default: o = {Status::failed, {}, entry + " returned an unknown status " + std::to_string(reply.status)};
    }
  }
  o.derived = call.derived;
  return o;
}

}  // namespace posenc::conformance
