#pragma once
// Command-line numbers: decimal or C99 hex floats ("0x1.8p+1"), decimal integers, comma lists.
// Every failure names the option and the text it could not read.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace posenc::cli {

// The double nearest to the text (as a config parser reads it); hex floats are exact.
// Rejects empty text, trailing characters, nan, inf and values that overflow.
double parse_double(std::string_view option, std::string_view text);
std::int64_t parse_int64(std::string_view option, std::string_view text);
bool parse_bool(std::string_view option, std::string_view text);
std::vector<double> parse_double_list(std::string_view option, std::string_view text);
std::vector<std::int64_t> parse_int64_list(std::string_view option, std::string_view text);
// The comma-separated parts of text ("a,b" -> "a", "b"; "" -> one empty part).
std::vector<std::string_view> split_list(std::string_view text);

}  // namespace posenc::cli
