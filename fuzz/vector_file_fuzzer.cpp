// libFuzzer target: the golden-vector file reader. Any input is either a vector file that writes
// back to text the reader accepts again with the same content, or is refused with a
// VectorFileError; anything else (another exception, a crash, a sanitizer report) is a bug.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "posenc/vectors/vector_json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace posenc::conformance;
  const std::string text(reinterpret_cast<const char*>(data), size);
  VectorFile file;
  try {
    file = parse_vector_file(text, "fuzz.json");
  } catch (const VectorFileError&) {
    return 0;
  }
  const VectorFile again = parse_vector_file(write_vector_file(file), "fuzz-rewritten.json");
  if (again.number_of_tests() != file.number_of_tests() || again.groups.size() != file.groups.size()) std::abort();
  return 0;
}
