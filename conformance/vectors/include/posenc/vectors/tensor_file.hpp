#pragma once
// Named tensors in the safetensors format (huggingface/safetensors, docs "Format"): an 8-byte
// little-endian header length N, N bytes of JSON {name: {"dtype", "shape", "data_offsets":
// [begin, end]}, ...} (padded with spaces to a multiple of 8), then the data, each tensor
// row-major and little-endian, at its offsets from the end of the header. A Python user reads it
// with numpy alone (SPEC.md section 4). Writing is deterministic: names in sorted order, their
// data in the same order.
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "posenc/formats.hpp"

namespace posenc::conformance {

// The safetensors dtypes posenc uses: the four formats, positions and masks.
enum class TensorType { f64, f32, bf16, f16, i64, u8 };

struct Tensor {
  TensorType type = TensorType::f64;
  std::vector<std::int64_t> shape;
  std::string bytes;  // little-endian, row-major
};

class TensorFile {
 public:
  // Values of format f (each must be exactly representable there), stored as that format.
  void put_values(const std::string& name, Format f, std::vector<std::int64_t> shape, std::span<const double> values);
  // Bit patterns of format f.
  void put_bits(const std::string& name, Format f, std::vector<std::int64_t> shape, std::span<const std::uint64_t> bits);
  void put_ints(const std::string& name, std::vector<std::int64_t> shape, std::span<const std::int64_t> values);
  void put_bytes(const std::string& name, std::vector<std::int64_t> shape, std::span<const std::uint8_t> values);

  bool has(const std::string& name) const { return tensors_.count(name) != 0; }
  const std::map<std::string, Tensor>& tensors() const { return tensors_; }
  // The tensor `name`, which must have `shape` (-1: any extent there) and, for the getters with a
  // format, a float dtype; refused (VectorFileError naming the file and the tensor) otherwise.
  std::vector<double> values(const std::string& name, const std::vector<std::int64_t>& shape) const;
  std::vector<std::uint64_t> bits(const std::string& name, Format f, const std::vector<std::int64_t>& shape) const;
  std::vector<std::int64_t> ints(const std::string& name, const std::vector<std::int64_t>& shape) const;
  std::vector<std::uint8_t> bytes(const std::string& name, const std::vector<std::int64_t>& shape) const;
  // A tensor of any shape, flattened (its size is checked by its user).
  std::vector<double> flat_values(const std::string& name) const;
  std::vector<std::int64_t> flat_ints(const std::string& name) const;
  std::vector<std::uint8_t> flat_bytes(const std::string& name) const;
  // The format of a float tensor (its dtype).
  Format format(const std::string& name) const;

  std::string write() const;
  // `file` names the bytes' origin in errors. A malformed header, offsets that overlap, leave
  // gaps or run past the end, or a dtype posenc does not use are refused (VectorFileError).
  static TensorFile parse(const std::string& bytes, const std::string& file);

  std::string file;  // where it was read from, for errors

 private:
  const Tensor& get(const std::string& name, const std::vector<std::int64_t>& shape) const;
  std::map<std::string, Tensor> tensors_;
};

std::string_view to_string(TensorType t);  // "F64", "BF16", ...

}  // namespace posenc::conformance
