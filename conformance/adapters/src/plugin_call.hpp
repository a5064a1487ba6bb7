#pragma once
// The plugin child's side of the protocol (plugin_protocol.hpp): runs in the forked child, loads
// the library once, sends its greeting, then performs one request after another until the suite
// closes the socket. Every buffer an entry point is handed sits between guard pages
// (guarded_buffer.hpp); inputs are compared with their copies after the call and outputs are
// pre-filled with all-ones bytes (a NaN in every format). During each call the address space is
// capped at what the child maps at that moment plus `memory_budget` bytes.
#include <cstddef>
#include <string>

namespace posenc::conformance {

// Never returns: exits 0 when the suite closes the socket, 4 on a request it cannot read.
[[noreturn]] void serve(const std::string& path, int socket, std::size_t memory_budget);

}  // namespace posenc::conformance
