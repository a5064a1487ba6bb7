// libFuzzer target: the command-line number parser (decimal and C99 hex floats, integers, comma
// lists). Every input is read or refused with an InvalidParameter; a hex float that is accepted
// must print back (%a) to a text that parses to the same bits.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "numbers.hpp"
#include "posenc/errors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace posenc::cli;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const double v = parse_double("--x", text);
    char printed[64];
    std::snprintf(printed, sizeof printed, "%a", v);
    const double back = parse_double("--x", printed);
    if (std::memcmp(&v, &back, sizeof v) != 0) std::abort();
  } catch (const posenc::InvalidParameter&) {
  }
  try {
    (void)parse_int64("--n", text);
  } catch (const posenc::InvalidParameter&) {
  }
  try {
    (void)parse_double_list("--x", text);
  } catch (const posenc::InvalidParameter&) {
  }
  try {
    (void)parse_int64_list("--positions", text);
  } catch (const posenc::InvalidParameter&) {
  }
  return 0;
}
