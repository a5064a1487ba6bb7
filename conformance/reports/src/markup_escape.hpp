#pragma once
// Text placed inside XML or HTML (JUnit reports, the HTML report): the five special characters
// escaped, so no value from a vector file or an implementation's name can break the markup.
#include <string>

namespace posenc::conformance {

inline std::string markup_escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += ch;
    }
  }
  return out;
}

}  // namespace posenc::conformance
