#include "fast_adapter.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "posenc/errors.hpp"
#include "posenc/fast/attention.hpp"
#include "posenc/vectors/case_types.hpp"

namespace posenc::conformance {
namespace {

using fast::DType;

std::optional<DType> storage(Format f) {
  switch (f) {
    case Format::f32:
      return DType::f32;
    case Format::bf16:
      return DType::bf16;
    case Format::f16:
      return DType::f16;
    default:
      return std::nullopt;
  }
}

std::vector<float> floats(const std::vector<double>& v) { return {v.begin(), v.end()}; }
std::vector<double> doubles(const std::vector<float>& v) { return {v.begin(), v.end()}; }

// Values of `v` in storage `d` (exact: the suite only asks for formats the inputs are exact in).
std::vector<std::uint16_t> to_storage16(DType d, std::span<const double> v) {
  std::vector<std::uint16_t> out;
  for (double x : v) out.push_back(static_cast<std::uint16_t>(exact_bits(d == DType::bf16 ? Format::bf16 : Format::f16, x).value()));
  return out;
}

std::vector<double> rotate(const cases::RopeRotate& r, DType d, fast::Isa isa) {
  validate_rope_positions(r.p, r.position);
  validate_input_vector("rope.x", r.x, r.p.head_dim, true);  // a NaN propagates to its pair (SPEC 2.3)
  const fast::RopePlan plan(r.p);
  fast::RopeTensor q;
  fast::Options options;
  options.isa = isa;
  if (d == DType::f32) {
    std::vector<float> x(r.x.begin(), r.x.end());
    std::vector<float> y(x.size());
    q.in = x.data();
    q.out = y.data();
    fast::rope_apply(plan, d, 1, 1, r.position.data(), q, {}, options);
    return doubles(y);
  }
  const Format f = d == DType::bf16 ? Format::bf16 : Format::f16;
  auto x = to_storage16(d, r.x);
  std::vector<std::uint16_t> y(x.size());
  q.in = x.data();
  q.out = y.data();
  fast::rope_apply(plan, d, 1, 1, r.position.data(), q, {}, options);
  std::vector<double> out;
  for (auto h : y) out.push_back(to_double(f, h));
  return out;
}

// The fast path forms angles accurately for |position| <= 2^32 only (fast.hpp, kMaxPosition) and
// refuses positions beyond; a valid case there (the vectors go down to -2^62) is one it does not
// offer, like a format it does not store: unsupported, not a refusal of valid parameters.
bool beyond_fast_domain(std::span<const std::int64_t> position) {
  return std::any_of(position.begin(), position.end(),
                     [](std::int64_t p) { return p < -fast::kMaxPosition || p > fast::kMaxPosition; });
}

// An attention case as the decode kernel runs it (fast/attention.hpp): its first n_k - n_q keys
// are the cache, rotated into it by fast's RoPE; the queries are the last n_q tokens, whose keys
// and values each call appends, at most kMaxAttentionTokens per call, so that a causal block goes
// as successive decode steps. What a decode kernel does not offer is refused (not judged): an
// explicit mask, a given cos/sin table, queries at other positions than their own keys', more
// than one call's tokens without a causal mask, positions beyond the fast path's domain.
std::optional<std::vector<double>> attend(const cases::Attention& a, DType d, fast::Isa isa, NotJudged& why) {
  const AttentionParams& p = a.p;
  validate(p, a.in);
  const std::int64_t nq = a.in.queries, nk = a.in.keys, axes = p.position_axes();
  const std::int64_t H = p.query_heads, G = p.kv_heads, dk = p.head_dim, dv = p.value_dim, first = nk - nq;
  bool offered = p.mask != AttentionMask::explicit_ && !p.rope_table_given &&
                 (p.mask == AttentionMask::causal || nq <= fast::kMaxAttentionTokens) &&
                 std::equal(a.in.query_positions.begin(), a.in.query_positions.end(), a.in.key_positions.begin() + first * axes);
  if (p.rope) offered = offered && !beyond_fast_domain(a.in.key_positions);
  if (!offered) {
    why = NotJudged::refused;
    return std::nullopt;
  }
  const fast::AttentionPlan plan(p);
  const std::size_t size = fast::size_of(d);
  // Values of the case in storage d (exact: the suite asks only for formats that hold its inputs).
  const auto stored = [&](std::span<const double> v) {
    std::vector<std::uint8_t> out(v.size() * size);
    if (d == DType::f32) {
      const std::vector<float> f = floats({v.begin(), v.end()});
      std::memcpy(out.data(), f.data(), out.size());
    } else {
      const std::vector<std::uint16_t> h = to_storage16(d, v);
      std::memcpy(out.data(), h.data(), out.size());
    }
    return out;
  };
  const auto value = [&](const std::uint8_t* p0, std::size_t i) -> double {
    if (d == DType::f32) {
      float x;
      std::memcpy(&x, p0 + i * 4, 4);
      return x;
    }
    std::uint16_t h;
    std::memcpy(&h, p0 + i * 2, 2);
    return to_double(d == DType::bf16 ? Format::bf16 : Format::f16, h);
  };
  const std::vector<std::uint8_t> q = stored(a.in.q), k = stored(a.in.k), v = stored(a.in.v);
  std::vector<std::uint8_t> cache_k(k.size()), cache_v(v.size()), out(static_cast<std::size_t>(nq * H * dv) * size),
      lse(static_cast<std::size_t>(nq * H) * size);
  std::vector<std::int64_t> cache_positions(static_cast<std::size_t>(nk));
  fast::KvCache cache;
  cache.dtype = d;
  cache.k = cache_k.data();
  cache.v = cache_v.data();
  cache.capacity = nk;
  cache.k_token_stride = G * dk;
  cache.k_head_stride = dk;
  cache.v_token_stride = G * dv;
  cache.v_head_stride = dv;
  cache.positions = cache_positions.data();
  fast::Options options;
  options.isa = isa;
  if (first > 0) {
    if (plan.rope()) {
      fast::RopeTensor keys;
      keys.in = k.data();
      keys.out = cache_k.data();
      keys.in_token_stride = keys.out_token_stride = G * dk;
      keys.in_head_stride = keys.out_head_stride = dk;
      fast::rope_apply(*plan.rope(), d, first, G, a.in.key_positions.data(), keys, {}, options);
    } else {
      std::memcpy(cache_k.data(), k.data(), static_cast<std::size_t>(first * G * dk) * size);
    }
    std::memcpy(cache_v.data(), v.data(), static_cast<std::size_t>(first * G * dv) * size);
    for (std::int64_t j = 0; j < first; ++j) cache_positions[static_cast<std::size_t>(j)] = a.in.key_positions[static_cast<std::size_t>(j * axes)];
  }
  const std::int64_t step = p.mask == AttentionMask::causal ? fast::kMaxAttentionTokens : nq;
  for (std::int64_t i = 0; i < nq; i += step) {
    fast::AttentionTokens t;
    t.dtype = d;
    t.count = std::min(step, nq - i);
    t.positions = a.in.query_positions.data() + i * axes;
    t.q = q.data() + static_cast<std::size_t>(i * H * dk) * size;
    t.q_token_stride = H * dk;
    t.q_head_stride = dk;
    t.k = k.data() + static_cast<std::size_t>((first + i) * G * dk) * size;
    t.k_token_stride = G * dk;
    t.k_head_stride = dk;
    t.v = v.data() + static_cast<std::size_t>((first + i) * G * dv) * size;
    t.v_token_stride = G * dv;
    t.v_head_stride = dv;
    t.out = out.data() + static_cast<std::size_t>(i * H * dv) * size;
    t.out_token_stride = H * dv;
    t.out_head_stride = dv;
    t.lse = lse.data() + static_cast<std::size_t>(i * H) * size;
    fast::attention_decode(plan, cache, first + i, t, options);
  }
  std::vector<double> values;
  for (std::size_t e = 0; e < static_cast<std::size_t>(nq * H * dv); ++e) values.push_back(value(out.data(), e));
  for (std::size_t e = 0; e < static_cast<std::size_t>(nq * H); ++e) values.push_back(value(lse.data(), e));
  return values;
}

// The case's outputs in format f, or nothing when the fast path does not offer it: rotations in
// every storage format, frequencies in binary64 (as derived) and f32, everything else but the dot
// products (see fast_adapter.hpp) in f32. why says which: no entry point, or refused (a position
// beyond the fast path's domain).
std::optional<std::vector<double>> outputs(const TypedCase& k, Format f, fast::Isa isa, NotJudged& why) {
  using Values = std::optional<std::vector<double>>;
  if (f != Format::f32 && !std::holds_alternative<cases::RopeRotate>(k) && !std::holds_alternative<cases::Attention>(k) &&
      !(f == Format::f64 && std::holds_alternative<cases::RopeFrequencies>(k))) {
    return std::nullopt;
  }
  return std::visit(
      overloaded{
          [&](const cases::RopeFrequencies& r) -> Values {
            const fast::RopePlan plan(r.p);
            std::vector<double> v;
            for (std::int64_t i = 0; i < plan.pairs(); ++i) v.push_back(plan.inv_freq(i));
            v.push_back(plan.attention_factor());
            return f == Format::f32 ? doubles(floats(v)) : v;
          },
          [&](const cases::RopeRotate& r) -> Values {
            if (!storage(f)) return std::nullopt;
            validate_rope_positions(r.p, r.position);
            if (beyond_fast_domain(r.position)) {
              why = NotJudged::refused;
              return std::nullopt;
            }
            return rotate(r, *storage(f), isa);
          },
          [&](const cases::RopeTable& r) -> Values {
            validate_rope_positions(r.p, r.position);
            if (beyond_fast_domain(r.position)) {
              why = NotJudged::refused;
              return std::nullopt;
            }
            const fast::RopePlan plan(r.p);
            std::vector<float> cs(static_cast<std::size_t>(plan.pairs())), sn(cs.size());
            plan.table_row(r.position, cs, sn, isa);
            cs.insert(cs.end(), sn.begin(), sn.end());
            return doubles(cs);
          },
          [&](const cases::SinusoidalRow& r) -> Values {
            std::vector<float> row(r.outputs());
            fast::sinusoidal_table(r.p, {&r.position, 1}, row, isa);
            return doubles(row);
          },
          [&](const cases::SinusoidalEmbed& r) -> Values {
            validate(r.p);
            validate_input_vector("sinusoidal.x", r.x, r.p.d_model);
            std::vector<float> x(r.x.begin(), r.x.end());
            fast::sinusoidal_embed(r.p, {&r.position, 1}, x, isa);
            return doubles(x);
          },
          [&](const cases::AlibiSlopes& r) -> Values { return doubles(fast::alibi_slopes(r.p)); },
          [&](const cases::AlibiBias& r) -> Values {
            validate(r.p);
            validate_alibi_head(r.p, r.head);
            validate_alibi_positions(r.p, r.query, r.key);
            // One score per head (a 1 x 1 block each), at the case's query and key positions.
            std::vector<float> scores(static_cast<std::size_t>(r.p.n_heads), 0.0f);
            fast::alibi_add_bias(r.p, {.scores = scores, .n_query = 1, .n_key = 1, .head_stride = 1,
                                       .query_stride = 1, .first_query = r.query, .first_key = r.key});
            return std::vector<double>{scores[static_cast<std::size_t>(r.head)]};
          },
          [&](const cases::LearnedLookup& r) -> Values {
            validate(r.p);
            validate_learned_position(r.p, r.position);
            validate_input_vector("learned.table", r.table, r.p.parameter_count());
            const std::vector<float> table(r.table.begin(), r.table.end());
            std::vector<float> row(r.outputs());
            fast::learned_lookup(r.p, table, {&r.position, 1}, row);
            return doubles(row);
          },
          [](const cases::SinusoidalDot&) -> Values { return std::nullopt; },
          [](const cases::RopeDot&) -> Values { return std::nullopt; },
          [&](const cases::Attention& a) -> Values {
            if (!storage(f)) return std::nullopt;
            return attend(a, *storage(f), isa, why);
          },
      },
      k);
}

}  // namespace

std::string FastImplementation::name() const { return "posenc fast (" + std::string(fast::to_string(isa_)) + ")"; }

std::vector<Outcome> FastImplementation::run(const VectorGroup& g, const VectorCase& c, std::span<const Format> formats) {
  const TypedCase k = typed_case(g, c);
  std::vector<Outcome> out;
  for (Format f : formats) {
    Outcome o;
    try {
      if (auto values = outputs(k, f, isa_, o.why_unsupported)) {
        o.status = Status::ok;
        o.values = std::move(*values);
      }
    } catch (const InvalidParameter& e) {
      o.status = Status::invalid;
      o.message = e.what();
    }
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace posenc::conformance
