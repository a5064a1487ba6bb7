#include "posenc/errors.hpp"

namespace posenc {

InvalidParameter::InvalidParameter(std::string parameter, std::string value, std::string allowed)
    : Error("invalid " + parameter + " = " + value + ": must be " + allowed),
      parameter_(std::move(parameter)),
      value_(std::move(value)),
      allowed_(std::move(allowed)) {}

}  // namespace posenc
