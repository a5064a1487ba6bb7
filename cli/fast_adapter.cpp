#include "fast_adapter.hpp"

#include <cstdint>

#include "posenc/errors.hpp"

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
std::vector<std::uint16_t> to_storage16(DType d, const std::vector<double>& v) {
  std::vector<std::uint16_t> out;
  for (double x : v) out.push_back(static_cast<std::uint16_t>(exact_bits(d == DType::bf16 ? Format::bf16 : Format::f16, x).value()));
  return out;
}

std::vector<double> rotate(const RopeParams& p, const VectorCase& c, DType d, fast::Isa isa) {
  validate_rope_positions(p, c.position);
  validate_input_vector("rope.x", c.x, p.head_dim, true);  // a NaN propagates to its pair (SPEC 2.3)
  const fast::RopePlan plan(p);
  fast::RopeTensor q;
  fast::Options options;
  options.isa = isa;
  if (d == DType::f32) {
    auto x = floats(c.x);
    std::vector<float> y(x.size());
    q.in = x.data();
    q.out = y.data();
    fast::rope_apply(plan, d, 1, 1, c.position.data(), q, {}, options);
    return doubles(y);
  }
  const Format f = d == DType::bf16 ? Format::bf16 : Format::f16;
  auto x = to_storage16(d, c.x);
  std::vector<std::uint16_t> y(x.size());
  q.in = x.data();
  q.out = y.data();
  fast::rope_apply(plan, d, 1, 1, c.position.data(), q, {}, options);
  std::vector<double> out;
  for (auto h : y) out.push_back(to_double(f, h));
  return out;
}

// The case's outputs in binary32 storage, or nothing when the fast path does not offer it.
std::optional<std::vector<double>> run_f32(const VectorGroup& g, const VectorCase& c, fast::Isa isa) {
  switch (g.type) {
    case CaseType::rope_table: {
      const auto& p = std::get<RopeParams>(g.params);
      validate_rope_positions(p, c.position);
      const fast::RopePlan plan(p);
      std::vector<float> cs(static_cast<std::size_t>(plan.pairs())), sn(cs.size());
      plan.table_row(c.position, cs, sn, isa);
      cs.insert(cs.end(), sn.begin(), sn.end());
      return doubles(cs);
    }
    case CaseType::sinusoidal_row: {
      const auto& p = std::get<SinusoidalParams>(g.params);
      std::vector<float> row(static_cast<std::size_t>(std::max<std::int64_t>(p.d_model, 0)));
      fast::sinusoidal_table(p, c.position, row, isa);
      return doubles(row);
    }
    case CaseType::sinusoidal_embed: {
      const auto& p = std::get<SinusoidalParams>(g.params);
      validate(p);
      validate_input_vector("sinusoidal.x", c.x, p.d_model);
      auto x = floats(c.x);
      fast::sinusoidal_embed(p, c.position, x, isa);
      return doubles(x);
    }
    case CaseType::alibi_slopes:
      return doubles(fast::alibi_slopes(std::get<AlibiParams>(g.params)));
    case CaseType::alibi_bias: {
      const auto& p = std::get<AlibiParams>(g.params);
      validate(p);
      validate_alibi_head(p, c.head);
      validate_alibi_positions(p, c.query, c.key);
      // One score per head (a 1 x 1 block each), at the case's query and key positions.
      std::vector<float> scores(static_cast<std::size_t>(p.n_heads), 0.0f);
      fast::alibi_add_bias(p, {.scores = scores, .n_query = 1, .n_key = 1, .head_stride = 1, .query_stride = 1,
                               .first_query = c.query, .first_key = c.key});
      return std::vector<double>{scores[static_cast<std::size_t>(c.head)]};
    }
    case CaseType::learned_lookup: {
      const auto& p = std::get<LearnedParams>(g.params);
      validate(p);
      validate_learned_position(p, c.position.at(0));
      validate_input_vector("learned.table", g.table, p.parameter_count());
      const auto table = floats(g.table);
      std::vector<float> row(static_cast<std::size_t>(p.dim));
      fast::learned_lookup(p, table, c.position, row);
      return doubles(row);
    }
    default:
      return std::nullopt;
  }
}

}  // namespace

std::string FastImplementation::name() const { return "posenc fast (" + std::string(fast::to_string(isa_)) + ")"; }

std::vector<Outcome> FastImplementation::run(const VectorGroup& g, const VectorCase& c, std::span<const Format> formats) {
  std::vector<Outcome> out;
  for (Format f : formats) {
    Outcome o;
    try {
      std::optional<std::vector<double>> values;
      if (g.type == CaseType::rope_frequencies && (f == Format::f64 || f == Format::f32)) {
        const fast::RopePlan plan(std::get<RopeParams>(g.params));
        std::vector<double> v;
        for (std::int64_t i = 0; i < plan.pairs(); ++i) v.push_back(plan.inv_freq(i));
        v.push_back(plan.attention_factor());
        if (f == Format::f32) v = doubles(floats(v));
        values = v;
      } else if (g.type == CaseType::rope_rotate && storage(f)) {
        values = rotate(std::get<RopeParams>(g.params), c, *storage(f), isa_);
      } else if (f == Format::f32) {
        values = run_f32(g, c, isa_);
      }
      if (values) {
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
