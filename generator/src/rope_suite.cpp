#include "rope_suite.hpp"

#include "catalog.hpp"

namespace posenc::generator {
namespace {

std::vector<std::string> joined(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

std::vector<std::int64_t> same_on_all_axes(const RopeParams& p, std::int64_t position) {
  return std::vector<std::int64_t>(static_cast<std::size_t>(p.position_axes()), position);
}

void add_rope_suite(FileBuilder& b, const RopeParams& p, const std::string& what, const RopeSuite& s) {
  b.group(CaseType::rope_frequencies, p, what + ": inverse frequencies, then the attention factor");
  b.add(at_axes({}, "inv_freq per pair and attention factor", s.flags));

  if (s.table) {
    b.group(CaseType::rope_table, p, what + ": table rows [m cos t_i..., m sin t_i...]");
    for (auto pos : s.full_sweep ? full_sweep() : short_sweep()) {
      b.add(at_axes(same_on_all_axes(p, pos), "position " + std::to_string(pos), joined(position_flags(pos), s.flags)));
    }
  }

  for (Format f : s.rotate_formats) {
    b.group(CaseType::rope_rotate, p, what + ": rotation of inputs exact in " + std::string(to_string(f)), f);
    const auto positions = f == Format::f64 ? short_sweep() : std::vector<std::int64_t>{0, 1, 2047, 16777217, 2147483647};
    for (auto pos : positions) {
      VectorCase c = at_axes(same_on_all_axes(p, pos), "position " + std::to_string(pos) + ", random x",
                             joined(position_flags(pos), s.flags));
      c.x = random_vector(b.rng(), f, p.head_dim);
      b.add(std::move(c));
    }
  }

  if (s.dots) {
    b.group(CaseType::rope_dot, p, what + ": q.k after rotating q at m and k at n (same distance 2)");
    const auto q = random_vector(b.rng(), Format::f64, p.head_dim);
    const auto k = random_vector(b.rng(), Format::f64, p.head_dim);
    for (auto [m, n] : {std::pair<std::int64_t, std::int64_t>{5, 3}, {1048581, 1048579}, {2147483647, 2147483645}}) {
      VectorCase c = at_axes(same_on_all_axes(p, m), "q at " + std::to_string(m) + ", k at " + std::to_string(n),
                             joined(joined({"SameDistance"}, position_flags(m)), s.flags));
      c.position_b = same_on_all_axes(p, n);
      c.x = q;
      c.y = k;
      b.add(std::move(c));
    }
  }
}

}  // namespace posenc::generator
