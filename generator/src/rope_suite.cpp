#include "rope_suite.hpp"

#include <algorithm>

#include "catalog.hpp"

namespace posenc::generator {
namespace {

std::vector<std::string> joined(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The sweep, cut below s.below (with below - 1, the position that sets HF's seq_len) when set.
std::vector<std::int64_t> positions(const RopeSuite& s) {
  auto all = !s.sweep.empty() ? s.sweep : s.full_sweep ? full_sweep() : short_sweep();
  if (s.below <= 0) return all;
  std::erase_if(all, [&](std::int64_t p) { return p >= s.below; });
  if (std::find(all.begin(), all.end(), s.below - 1) == all.end()) all.push_back(s.below - 1);
  return all;
}

std::vector<std::pair<std::int64_t, std::int64_t>> dot_pairs(const RopeSuite& s) {
  std::vector<std::pair<std::int64_t, std::int64_t>> pairs{{5, 3}, {1048581, 1048579}, {2147483647, 2147483645}};
  if (!s.dot_pairs.empty()) pairs = s.dot_pairs;
  if (s.below <= 0) return pairs;
  std::erase_if(pairs, [&](auto pq) { return pq.first >= s.below; });
  if (s.below - 1 > 5) pairs.emplace_back(s.below - 1, s.below - 3);
  return pairs;
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
    for (auto pos : positions(s)) {
      b.add(at_axes(same_on_all_axes(p, pos), "position " + std::to_string(pos), joined(position_flags(pos), s.flags)));
    }
  }

  b.group(CaseType::rope_rotate, p, what + ": rotation of inputs on the common grid (judged in f64, f32, bf16, f16)",
          kCommonGrid);
  for (auto pos : positions(s)) {
    VectorCase c = at_axes(same_on_all_axes(p, pos), "position " + std::to_string(pos) + ", random x",
                           joined(position_flags(pos), s.flags));
    c.x = grid_vector(b.rng(), p.head_dim);
    b.add(std::move(c));
  }

  for (Format f : s.full_precision_formats) {
    const bool f64_only = f == Format::f64;
    std::string holders;
    for (Format g : kAllFormats) {
      if (spec(g).precision >= spec(f).precision) holders += (holders.empty() ? "" : ", ") + std::string(to_string(g));
    }
    b.group(CaseType::rope_rotate, p,
            what + ": rotation of inputs with every bit of " + std::string(to_string(f)) + " (judged in " + holders +
                " only: the grid's 8-bit inputs leave most bits of a wider format's products zero)",
            f);
    for (auto pos : short_sweep()) {
      VectorCase c = at_axes(same_on_all_axes(p, pos), "position " + std::to_string(pos) + ", random x",
                             joined(joined(position_flags(pos), {f64_only ? "F64Only" : "FormatSubset"}), s.flags));
      c.x = random_vector(b.rng(), f, p.head_dim);
      b.add(std::move(c));
    }
  }

  if (s.dots) {
    b.group(CaseType::rope_dot, p, what + ": q.k after rotating q at m and k at n (same distance 2), q and k on the grid",
            kCommonGrid);
    const auto q = grid_vector(b.rng(), p.head_dim);
    const auto k = grid_vector(b.rng(), p.head_dim);
    for (auto [m, n] : dot_pairs(s)) {
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
