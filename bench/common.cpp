#include "common.hpp"

#include <bit>
#include <cstring>
#include <map>
#include <numeric>
#include <random>
#include <span>
#include <stdexcept>
#include <utility>

namespace posenc::bench {

std::int64_t Workload::elements() const { return tokens * std::accumulate(heads.begin(), heads.end(), std::int64_t{0}) * kDim; }

std::vector<Workload> workloads() {
  std::vector<Workload> w;
  for (auto [shape, tokens] : {std::pair{"A", 512}, {"B", 4096}}) {
    w.push_back({std::string("Q/") + shape, tokens, {32}});
    w.push_back({std::string("GQA/") + shape, tokens, {32, 8}});
    w.push_back({std::string("QK/") + shape, tokens, {32, 32}});
  }
  w.push_back({"decode/1", 1, {40}});
  w.push_back({"decode/64", 64, {40}, true});
  return w;
}

Workload workload(const std::string& name) {
  for (const Workload& w : workloads()) {
    if (w.name == name) return w;
  }
  throw std::logic_error("no workload " + name);
}

RopeParams llama(RopeLayout layout) {
  RopeParams p;
  p.head_dim = p.rotary_dim = kDim;
  p.base = 500000;
  p.layout = layout;
  return p;
}

std::vector<std::int64_t> positions(const Workload& w) {
  std::vector<std::int64_t> p(static_cast<std::size_t>(w.tokens));
  std::mt19937 rng(2);
  std::uniform_int_distribution<std::int64_t> anywhere(0, 131071);
  for (std::size_t t = 0; t < p.size(); ++t) p[t] = w.scattered ? anywhere(rng) : 100000 + static_cast<std::int64_t>(t);
  return p;
}

Tables tables(const fast::RopePlan& plan, const std::vector<std::int64_t>& positions) {
  const auto half = static_cast<std::size_t>(kDim / 2);
  Tables t{std::vector<float>(positions.size() * half), std::vector<float>(positions.size() * half)};
  for (std::size_t i = 0; i < positions.size(); ++i) {
    plan.table_row({&positions[i], 1}, std::span(t.cos).subspan(i * half, half), std::span(t.sin).subspan(i * half, half),
                   fast::Isa::scalar);
  }
  return t;
}

Buffer<std::uint8_t> random_tensor(std::int64_t elements, fast::DType d) {
  static std::map<std::pair<std::int64_t, fast::DType>, Buffer<std::uint8_t>> made;
  auto& v = made[{elements, d}];
  if (!v.empty()) return v;
  const auto n = static_cast<std::size_t>(elements);
  v.resize(n * fast::size_of(d));
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> value(-4, 4);
  for (std::size_t i = 0; i < n; ++i) {
    const float f = value(rng);
    if (d == fast::DType::f32) {
      std::memcpy(v.data() + 4 * i, &f, 4);
    } else if (d == fast::DType::bf16) {
      const auto h = static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(f) >> 16);
      std::memcpy(v.data() + 2 * i, &h, 2);
    } else {
      const auto h = static_cast<_Float16>(f);
      std::memcpy(v.data() + 2 * i, &h, 2);
    }
  }
  return v;
}

void account(benchmark::State& state, const Workload& w, std::size_t element_size, int calls) {
  const std::int64_t elements = state.iterations() * calls * w.elements();
  state.SetItemsProcessed(elements);
  state.SetBytesProcessed(2 * elements * static_cast<std::int64_t>(element_size));
}

}  // namespace posenc::bench
