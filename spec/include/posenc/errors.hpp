#pragma once
// The errors every part of posenc throws. A caller can tell a bad parameter (their input) from a
// result the reference could not certify (a limit of the reference) without parsing messages.
#include <stdexcept>
#include <string>

namespace posenc {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A parameter or argument outside its allowed range. The message names all three parts:
//   invalid rope.head_dim = 7: must be an even integer >= 2
// `parameter()` is the stable, dotted name (family.field); golden vectors use it as the error kind.
class InvalidParameter : public Error {
 public:
  InvalidParameter(std::string parameter, std::string value, std::string allowed);
  const std::string& parameter() const noexcept { return parameter_; }
  const std::string& value() const noexcept { return value_; }
  const std::string& allowed() const noexcept { return allowed_; }

 private:
  std::string parameter_, value_, allowed_;
};

// The reference could not prove which way a value rounds within its precision cap (Ziv's
// strategy ran out of precision). Reported, never guessed.
class Uncertifiable : public Error {
 public:
  using Error::Error;
};

}  // namespace posenc
