#pragma once
// JSON text of vector files. write is deterministic (same VectorFile, same bytes); load refuses a
// malformed file with VectorFileError naming the file, the tcId (when inside a case) and the field.
#include <filesystem>
#include <functional>
#include <string>

#include "posenc/vectors/vectors.hpp"
#include "posenc/errors.hpp"

namespace posenc::conformance {

class VectorFileError : public Error {
 public:
  using Error::Error;
};

// The bytes of a vector file's tensor file, by its name (the JSON's "tensors.file").
using TensorReader = std::function<std::string(const std::string& file)>;

std::string write_vector_file(const VectorFile& file);
// The tensor file of a family that has one (attention: variant.safetensors), "" otherwise.
std::string write_tensor_file(const VectorFile& file);
// A file with a tensor file needs `read_tensors`; its SHA-256 is checked against the JSON's.
VectorFile parse_vector_file(const std::string& text, const std::string& name, const TensorReader& read_tensors = {});
VectorFile load_vector_file(const std::filesystem::path& path);
// Reads tensor files from the folder of the JSON file `json`.
TensorReader tensors_beside(const std::filesystem::path& json);

}  // namespace posenc::conformance
