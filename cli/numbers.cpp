#include "numbers.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "posenc/errors.hpp"

namespace posenc::cli {
namespace {

[[noreturn]] void bad(std::string_view option, std::string_view text, std::string_view expected) {
  throw InvalidParameter(std::string(option), "'" + std::string(text) + "'", std::string(expected));
}

}  // namespace

std::vector<std::string_view> split_list(std::string_view text) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    std::size_t comma = text.find(',', start);
    parts.push_back(text.substr(start, comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return parts;
}

double parse_double(std::string_view option, std::string_view text) {
  constexpr std::string_view expected = "a finite decimal or C99 hex float (e.g. 0.5, 0x1p-1)";
  const std::string s(text);
  if (s.empty() || std::isspace(static_cast<unsigned char>(s.front()))) bad(option, text, expected);
  for (char c : s) {
    // strtod also reads "nan", "inf" and "infinity"; those are not finite parameter values.
    if (c == 'n' || c == 'N' || c == 'i' || c == 'I') bad(option, text, expected);
  }
  errno = 0;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) bad(option, text, expected);
  if (errno == ERANGE && std::isinf(v)) bad(option, text, "a value within the binary64 range");
  return v;  // underflow yields the correctly rounded subnormal or zero, as a config parser does
}

std::int64_t parse_int64(std::string_view option, std::string_view text) {
  std::int64_t v = 0;
  auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || r.ec != std::errc() || r.ptr != text.data() + text.size()) {
    bad(option, text, "a decimal integer in [-2^63, 2^63-1]");
  }
  return v;
}

bool parse_bool(std::string_view option, std::string_view text) {
  if (text == "true") return true;
  if (text == "false") return false;
  bad(option, text, "true or false");
}

std::vector<double> parse_double_list(std::string_view option, std::string_view text) {
  std::vector<double> out;
  for (auto part : split_list(text)) out.push_back(parse_double(option, part));
  return out;
}

std::vector<std::int64_t> parse_int64_list(std::string_view option, std::string_view text) {
  std::vector<std::int64_t> out;
  for (auto part : split_list(text)) out.push_back(parse_int64(option, part));
  return out;
}

}  // namespace posenc::cli
