#include "posenc/vectors/tensor_file.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>

#include "posenc/vectors/json_reader.hpp"
#include "posenc/vectors/json_writer.hpp"

namespace posenc::conformance {
namespace {

constexpr std::array kTypeNames{"F64", "F32", "BF16", "F16", "I64", "U8"};
constexpr std::array kTypeSizes{8, 4, 2, 2, 8, 1};

std::size_t element_size(TensorType t) { return static_cast<std::size_t>(kTypeSizes[static_cast<std::size_t>(t)]); }

TensorType float_type(Format f) {
  switch (f) {
    case Format::f64: return TensorType::f64;
    case Format::f32: return TensorType::f32;
    case Format::bf16: return TensorType::bf16;
    case Format::f16: return TensorType::f16;
  }
  return TensorType::f64;
}

std::int64_t element_count(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (auto extent : shape) n *= extent;
  return n;
}

// Little-endian bytes of an unsigned value of `size` bytes.
void append_le(std::string& out, std::uint64_t v, std::size_t size) {
  for (std::size_t i = 0; i < size; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::uint64_t read_le(const char* p, std::size_t size) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < size; ++i) v |= std::uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
  return v;
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

[[noreturn]] void refuse(const std::string& file, const std::string& what) { throw VectorFileError(file + ": " + what); }

}  // namespace

std::string_view to_string(TensorType t) { return kTypeNames[static_cast<std::size_t>(t)]; }

void TensorFile::put_bits(const std::string& name, Format f, std::vector<std::int64_t> shape,
                          std::span<const std::uint64_t> bits) {
  Tensor t{float_type(f), std::move(shape), {}};
  if (element_count(t.shape) != static_cast<std::int64_t>(bits.size())) {
    throw Error("posenc: tensor " + name + " has " + std::to_string(bits.size()) + " values for shape " + shape_text(t.shape));
  }
  for (auto b : bits) append_le(t.bytes, b, element_size(t.type));
  tensors_[name] = std::move(t);
}

void TensorFile::put_values(const std::string& name, Format f, std::vector<std::int64_t> shape,
                            std::span<const double> values) {
  std::vector<std::uint64_t> bits;
  bits.reserve(values.size());
  for (double v : values) {
    const auto b = exact_bits(f, v);
    if (!b) throw Error("posenc: tensor " + name + ": a value is not exactly representable in " + std::string(to_string(f)));
    bits.push_back(*b);
  }
  put_bits(name, f, std::move(shape), bits);
}

void TensorFile::put_ints(const std::string& name, std::vector<std::int64_t> shape, std::span<const std::int64_t> values) {
  Tensor t{TensorType::i64, std::move(shape), {}};
  for (auto v : values) append_le(t.bytes, static_cast<std::uint64_t>(v), 8);
  tensors_[name] = std::move(t);
}

void TensorFile::put_bytes(const std::string& name, std::vector<std::int64_t> shape, std::span<const std::uint8_t> values) {
  Tensor t{TensorType::u8, std::move(shape), {}};
  t.bytes.assign(values.begin(), values.end());
  tensors_[name] = std::move(t);
}

const Tensor& TensorFile::get(const std::string& name, const std::vector<std::int64_t>& shape) const {
  const auto it = tensors_.find(name);
  if (it == tensors_.end()) refuse(file, "tensor '" + name + "': missing");
  const Tensor& t = it->second;
  bool fits = t.shape.size() == shape.size();
  for (std::size_t i = 0; fits && i < shape.size(); ++i) fits = shape[i] < 0 || shape[i] == t.shape[i];
  if (!fits) refuse(file, "tensor '" + name + "': shape " + shape_text(t.shape) + ", expected " + shape_text(shape) + " (-1: any)");
  return t;
}

Format TensorFile::format(const std::string& name) const {
  const auto it = tensors_.find(name);
  if (it == tensors_.end()) refuse(file, "tensor '" + name + "': missing");
  switch (it->second.type) {
    case TensorType::f64: return Format::f64;
    case TensorType::f32: return Format::f32;
    case TensorType::bf16: return Format::bf16;
    case TensorType::f16: return Format::f16;
    default: refuse(file, "tensor '" + name + "': dtype " + std::string(to_string(it->second.type)) + ", expected a float dtype");
  }
}

std::vector<std::uint64_t> TensorFile::bits(const std::string& name, Format f, const std::vector<std::int64_t>& shape) const {
  const Tensor& t = get(name, shape);
  if (t.type != float_type(f)) {
    refuse(file, "tensor '" + name + "': dtype " + std::string(to_string(t.type)) + ", expected " +
                     std::string(to_string(float_type(f))));
  }
  const std::size_t size = element_size(t.type);
  std::vector<std::uint64_t> out(t.bytes.size() / size);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = read_le(t.bytes.data() + i * size, size);
  return out;
}

std::vector<double> TensorFile::values(const std::string& name, const std::vector<std::int64_t>& shape) const {
  const Format f = format(name);
  std::vector<double> out;
  for (auto b : bits(name, f, shape)) out.push_back(to_double(f, b));
  return out;
}

std::vector<std::int64_t> TensorFile::ints(const std::string& name, const std::vector<std::int64_t>& shape) const {
  const Tensor& t = get(name, shape);
  if (t.type != TensorType::i64) refuse(file, "tensor '" + name + "': dtype " + std::string(to_string(t.type)) + ", expected I64");
  std::vector<std::int64_t> out(t.bytes.size() / 8);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<std::int64_t>(read_le(t.bytes.data() + i * 8, 8));
  return out;
}

std::vector<std::uint8_t> TensorFile::bytes(const std::string& name, const std::vector<std::int64_t>& shape) const {
  const Tensor& t = get(name, shape);
  if (t.type != TensorType::u8) refuse(file, "tensor '" + name + "': dtype " + std::string(to_string(t.type)) + ", expected U8");
  return {t.bytes.begin(), t.bytes.end()};
}

namespace {
std::vector<std::int64_t> any_shape(const std::map<std::string, Tensor>& tensors, const std::string& name) {
  const auto it = tensors.find(name);
  return it == tensors.end() ? std::vector<std::int64_t>{} : std::vector<std::int64_t>(it->second.shape.size(), -1);
}
}  // namespace

std::vector<double> TensorFile::flat_values(const std::string& name) const { return values(name, any_shape(tensors_, name)); }
std::vector<std::int64_t> TensorFile::flat_ints(const std::string& name) const { return ints(name, any_shape(tensors_, name)); }
std::vector<std::uint8_t> TensorFile::flat_bytes(const std::string& name) const { return bytes(name, any_shape(tensors_, name)); }

std::string TensorFile::write() const {
  json_io::Json header = json_io::Json::object();
  std::string data;
  for (const auto& [name, t] : tensors_) {
    const std::size_t begin = data.size();
    data += t.bytes;
    header[name] = json_io::Json{{"dtype", to_string(t.type)}, {"shape", t.shape}, {"data_offsets", {begin, data.size()}}};
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string out;
  append_le(out, text.size(), 8);
  return out + text + data;
}

TensorFile TensorFile::parse(const std::string& bytes, const std::string& file) {
  using namespace json_io;
  TensorFile out;
  out.file = file;
  if (bytes.size() < 8) refuse(file, "shorter than a safetensors header (8 bytes)");
  const std::uint64_t length = read_le(bytes.data(), 8);
  if (length > bytes.size() - 8) refuse(file, "header length " + std::to_string(length) + " runs past the end");
  const std::string text = bytes.substr(8, length);
  const std::size_t data_start = 8 + length;
  const JsonDocument document(text, file);
  const Location at{&file, std::nullopt, ""};
  require_object(document.root(), at);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
  for (const auto& [key, value] : document.root().members()) {
    const std::string name(key);
    if (name == "__metadata__") continue;
    const Location at_tensor = at.field(name);
    require_only(value, {"dtype", "shape", "data_offsets"}, at_tensor);
    Tensor t;
    const std::string dtype = read_string(member(value, "dtype", at_tensor), at_tensor.field("dtype"));
    std::size_t type = 0;
    while (type < kTypeNames.size() && dtype != kTypeNames[type]) ++type;
    if (type == kTypeNames.size()) at_tensor.field("dtype").fail("'" + dtype + "' is not a dtype posenc uses");
    t.type = static_cast<TensorType>(type);
    std::size_t i = 0;
    for (const auto& extent : array_elements(member(value, "shape", at_tensor), at_tensor.field("shape"))) {
      const std::int64_t e = read_small_int(extent, Where(at_tensor.field("shape"), i++));
      if (e < 0 || e > (std::int64_t{1} << 40)) at_tensor.field("shape").fail("extent " + std::to_string(e) + " out of range");
      t.shape.push_back(e);
    }
    const auto offsets = array_elements(member(value, "data_offsets", at_tensor), at_tensor.field("data_offsets"));
    if (offsets.size() != 2) at_tensor.field("data_offsets").fail("expected [begin, end]");
    const auto begin = static_cast<std::uint64_t>(read_small_int(offsets[0], Where(at_tensor.field("data_offsets"), 0)));
    const auto end = static_cast<std::uint64_t>(read_small_int(offsets[1], Where(at_tensor.field("data_offsets"), 1)));
    const auto expected = static_cast<std::uint64_t>(element_count(t.shape)) * element_size(t.type);
    if (end < begin || end - begin != expected || end > bytes.size() - data_start) {
      at_tensor.field("data_offsets").fail("[" + std::to_string(begin) + ", " + std::to_string(end) + ") does not hold " +
                                           std::to_string(expected) + " bytes inside the data");
    }
    t.bytes = bytes.substr(data_start + begin, end - begin);
    ranges.emplace_back(begin, end);
    if (!out.tensors_.emplace(name, std::move(t)).second) at_tensor.fail("appears twice");
  }
  // The data is exactly the tensors' bytes, each once: no overlap, no gap, nothing after.
  std::sort(ranges.begin(), ranges.end());
  std::uint64_t covered = 0;
  for (const auto& [begin, end] : ranges) {
    if (begin != covered) refuse(file, "tensor data overlaps or leaves a gap at byte " + std::to_string(covered));
    covered = end;
  }
  if (covered != bytes.size() - data_start) refuse(file, std::to_string(bytes.size() - data_start - covered) + " bytes after the last tensor");
  return out;
}

}  // namespace posenc::conformance
