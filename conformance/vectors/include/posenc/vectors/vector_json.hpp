#pragma once
// JSON text of vector files. write is deterministic (same VectorFile, same bytes); load refuses a
// malformed file with VectorFileError naming the file, the tcId (when inside a case) and the field.
#include <filesystem>
#include <string>

#include "posenc/vectors/vectors.hpp"
#include "posenc/errors.hpp"

namespace posenc::conformance {

class VectorFileError : public Error {
 public:
  using Error::Error;
};

std::string write_vector_file(const VectorFile& file);
VectorFile parse_vector_file(const std::string& text, const std::string& name);
VectorFile load_vector_file(const std::filesystem::path& path);

}  // namespace posenc::conformance
