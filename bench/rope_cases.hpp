#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common.hpp"

namespace posenc::bench {

// One configuration of rope_apply on a workload.
struct Case {
  Workload w;
  fast::DType d = fast::DType::f32;
  RopeLayout layout = RopeLayout::half;
  bool in_place = false, cached = false;
  int threads = 1;
  fast::Stores stores = fast::Stores::automatic;
  // Every call 16 positions on (a new anchor, rope.cpp; no row kept from the last call): a decode
  // step's or a forward pass's first layer. Otherwise the same positions every call, as its later
  // layers see them.
  bool moving = false;
  // A decode step of a model of this many layers (above 1): the call made `layers` times at the
  // same positions, as each layer makes it, then every position one on (the next token's step:
  // its first layer's call at a new position, a new anchor every 16 steps).
  int layers = 1;
};

// fused/W/FORMAT/LAYOUT/MODE/THREADS, MODE out, in, out-cached or out-streaming (the store mode
// forced), out-moving or out-stepN (a decode step of N layers); cached/... through a RopeCache.
std::string name(const Case& c);

// A case's plan, positions and tensors (tokens x heads x 128 each, contiguous), made once; each
// call() is one rope_apply on them.
class FastCall {
 public:
  explicit FastCall(const Case& c);
  ~FastCall();
  void call();  // Case::layers rope_apply calls
  int layers() const;
  // Tensor i's input and output (the same buffer in place): what its roofs run over.
  std::uint8_t* in(std::size_t i);
  std::uint8_t* out(std::size_t i);
  std::size_t tensors() const;
  std::size_t bytes(std::size_t i) const;  // of tensor i's input

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// posenc fast on the workloads (common.hpp), named as name() says.
void register_rope_cases();

}  // namespace posenc::bench
