// libFuzzer target: the results-file reader of `posenc verify` (SPEC.md section 7). Any input is
// accepted or refused with a VectorFileError; nothing else may happen.
#include <cstdint>
#include <string>

#include "posenc/adapters/results_file.hpp"
#include "posenc/vectors/vector_json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace posenc::conformance;
  try {
    const ResultsImplementation results(std::string(reinterpret_cast<const char*>(data), size), "fuzz-results.json");
    (void)results.name();
  } catch (const VectorFileError&) {
  }
  return 0;
}
