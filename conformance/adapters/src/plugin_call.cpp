#include "plugin_call.hpp"

#include <dlfcn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <utility>

#include "entry_points.hpp"
#include "guarded_buffer.hpp"
#include "posenc/abi/convert.hpp"
#include "plugin_protocol.hpp"

namespace posenc::conformance {
namespace {

// One call's buffers: guarded inputs (tensors and positions) copied in and checked unchanged
// afterwards, guarded outputs pre-filled so that an output never written fails the comparison.
class CallBuffers {
 public:
  const void* input(const void* bytes, std::size_t n) {
    GuardedBuffer& b = add(n);
    if (n > 0) std::memcpy(b.data(), bytes, n);
    const auto* data = static_cast<const unsigned char*>(b.data());
    inputs_.push_back({&b, std::vector<unsigned char>(data, data + b.bytes())});
    return b.data();
  }
  void* output(std::size_t n) {
    GuardedBuffer& b = add(n);
    // All-ones bytes are a NaN in every format: an output never written fails the comparison.
    std::memset(b.data(), 0xff, b.bytes());
    outputs_.push_back(&b);
    return b.data();
  }
  // Empty when every buffer is as it should be, else what went wrong.
  std::string damage() const {
    for (const auto& [buffer, copy] : inputs_) {
      if (std::memcmp(buffer->data(), copy.data(), copy.size()) != 0) return "modified its input";
      if (!buffer->slack_intact()) return "wrote before the start of an input buffer";
    }
    for (const auto* buffer : outputs_) {
      if (!buffer->slack_intact()) return "wrote before the start of its output buffer";
    }
    return {};
  }
  // The output buffers' bytes, in order.
  std::vector<std::vector<unsigned char>> outputs(const std::vector<std::uint64_t>& sizes) const {
    std::vector<std::vector<unsigned char>> out;
    for (std::size_t i = 0; i < outputs_.size(); ++i) {
      const auto* data = static_cast<const unsigned char*>(outputs_[i]->data());
      out.emplace_back(data, data + sizes[i]);
    }
    return out;
  }

 private:
  // A zero-length buffer still gets a valid address (one byte), as the ABI asks for pointers.
  GuardedBuffer& add(std::size_t bytes) {
    return *buffers_.emplace_back(std::make_unique<GuardedBuffer>(std::max<std::size_t>(bytes, 1)));
  }
  std::vector<std::unique_ptr<GuardedBuffer>> buffers_;
  std::vector<std::pair<GuardedBuffer*, std::vector<unsigned char>>> inputs_;
  std::vector<GuardedBuffer*> outputs_;
};

// Caps the address space at what the child maps now plus `budget` bytes while it lives, so a
// plugin that allocates without bound fails its call instead of exhausting the machine. Only the
// soft limit moves, and it is put back afterwards: the kept child measures anew before every
// call, so memory an earlier call left mapped does not eat into the next call's budget.
class AddressSpaceCap {
 public:
  explicit AddressSpaceCap(std::size_t budget) {
    if (getrlimit(RLIMIT_AS, &saved_) != 0) return;
    std::size_t pages = 0;
    if (FILE* f = std::fopen("/proc/self/statm", "r")) {
      if (std::fscanf(f, "%zu", &pages) != 1) pages = 0;
      std::fclose(f);
    }
    const auto now = pages * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    if (pages == 0 || now > std::numeric_limits<rlim_t>::max() - budget) return;
    const rlimit cap{std::min<rlim_t>(now + budget, saved_.rlim_max), saved_.rlim_max};
    set_ = setrlimit(RLIMIT_AS, &cap) == 0;
  }
  AddressSpaceCap(const AddressSpaceCap&) = delete;
  AddressSpaceCap& operator=(const AddressSpaceCap&) = delete;
  ~AddressSpaceCap() {
    if (set_) setrlimit(RLIMIT_AS, &saved_);
  }

 private:
  rlimit saved_{};
  bool set_ = false;
};

template <class F>
F symbol(void* library, const char* name) {
  return reinterpret_cast<F>(dlsym(library, name));
}

// Calls the request's entry point on the prepared buffers; the arguments go in the order of
// its plugin.h signature.
int invoke(void* library, const Request& r, const std::vector<const std::int64_t*>& pos,
           const std::vector<const void*>& in, const std::vector<void*>& out) {
  const auto& n = r.counts;
  const char* name = symbol_of(r.entry);
  switch (r.entry) {
    case EntryPoint::rope_apply:
      return symbol<entry::RopeApply>(library, name)(&r.rope, r.dtype, n.at(0), n.at(1), pos.at(0), in.at(0), n.at(2),
                                                     n.at(3), out.at(0), n.at(4), n.at(5));
    case EntryPoint::rope_table:
      return symbol<entry::RopeTable>(library, name)(&r.rope, r.dtype, n.at(0), pos.at(0), out.at(0));
    case EntryPoint::rope_frequencies:
      return symbol<entry::RopeFrequencies>(library, name)(&r.rope, static_cast<double*>(out.at(0)),
                                                           static_cast<double*>(out.at(1)));
    case EntryPoint::sinusoidal_table:
      return symbol<entry::SinusoidalTable>(library, name)(&r.sinusoidal, r.dtype, n.at(0), pos.at(0), out.at(0));
    case EntryPoint::sinusoidal_embed:
      return symbol<entry::SinusoidalEmbed>(library, name)(&r.sinusoidal, r.dtype, n.at(0), pos.at(0), in.at(0),
                                                           out.at(0));
    case EntryPoint::alibi_slopes:
      return symbol<entry::AlibiSlopes>(library, name)(&r.alibi, r.dtype, out.at(0));
    case EntryPoint::alibi_bias:
      return symbol<entry::AlibiBias>(library, name)(&r.alibi, r.dtype, n.at(0), pos.at(0), n.at(1), pos.at(1),
                                                     out.at(0));
    case EntryPoint::learned_lookup:
      return symbol<entry::LearnedLookup>(library, name)(n.at(0), n.at(1), r.dtype, in.at(0), n.at(2), pos.at(0),
                                                         out.at(0));
    case EntryPoint::attention: {
      posenc_attention_params a = r.attention;
      a.rope = a.rope ? &r.rope : nullptr;
      a.alibi = a.alibi ? &r.alibi : nullptr;
      // The mask and the table are passed only where the parameters have them (NULL otherwise).
      const auto* mask = a.mask == POSENC_MASK_EXPLICIT ? static_cast<const std::uint8_t*>(in.at(3)) : nullptr;
      const void* table = a.rope_table_given ? in.at(4) : nullptr;
      return symbol<entry::Attention>(library, name)(&a, r.dtype, n.at(0), n.at(1), pos.at(0), pos.at(1), in.at(0),
                                                     n.at(2), n.at(3), in.at(1), n.at(4), n.at(5), in.at(2), n.at(6),
                                                     n.at(7), mask, table, out.at(0), n.at(8), n.at(9), out.at(1),
                                                     n.at(10), n.at(11));
    }
  }
  _exit(4);  // an id no suite sends
}

Reply perform(void* library, const Request& r, std::size_t memory_budget) {
  if (static_cast<std::size_t>(r.entry) >= kEntryPointSymbols.size() || !dlsym(library, symbol_of(r.entry))) _exit(4);
  CallBuffers buffers;
  std::vector<const std::int64_t*> positions;
  for (const auto& p : r.positions) {
    positions.push_back(static_cast<const std::int64_t*>(buffers.input(p.data(), p.size() * sizeof(std::int64_t))));
  }
  std::vector<const void*> inputs;
  for (const auto& x : r.inputs) inputs.push_back(buffers.input(x.data(), x.size()));
  std::vector<void*> outputs;
  for (const auto n : r.output_bytes) outputs.push_back(buffers.output(static_cast<std::size_t>(n)));
  Reply reply;
  {
    const AddressSpaceCap cap(memory_budget);
    reply.status = invoke(library, r, positions, inputs, outputs);
  }
  reply.damage = buffers.damage();
  reply.outputs = buffers.outputs(r.output_bytes);
  return reply;
}

// The info's declarations into the greeting: its working formats (version 2 on) and attention's
// score and probability formats (version 3 on); a version without them leaves them 0, and
// nothing past the end of an older version's struct is read. Or what is wrong.
std::optional<std::string> checked_declarations(const posenc_plugin_info& info, Greeting& g) {
  // One array of per-storage-format codes: each checked by `decode`, which names the field.
  auto check = [&](const char* name, const std::int32_t (&codes)[4], std::array<std::int32_t, 4>& out,
                   auto decode) -> std::optional<std::string> {
    for (const Format f : kAllFormats) {
      const auto d = static_cast<std::size_t>(plugin::to_abi(f));
      const std::string field = std::string("posenc_plugin_info.") + name + "[" + std::string(to_string(f)) + "]";
      try {
        (void)decode(field, codes[d]);
      } catch (const InvalidParameter& e) {
        return std::string(e.what());
      }
      out[d] = codes[d];
    }
    return std::nullopt;
  };
  std::optional<std::string> bad;
  if (info.abi_version >= 2) bad = check("working_format", info.working_format, g.working_format, plugin::working_format_from_abi);
  if (!bad && info.abi_version >= 3) {
    bad = check("score_format", info.score_format, g.score_format, plugin::rounding_format_from_abi);
    if (!bad) bad = check("probability_format", info.probability_format, g.probability_format, plugin::rounding_format_from_abi);
  }
  return bad;
}

// Loads and queries the library; `library` stays null when that fails.
Greeting greet(const std::string& path, void*& library, std::size_t memory_budget) {
  const AddressSpaceCap cap(memory_budget);
  library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library) return {false, std::string("cannot load: ") + dlerror(), 0};
  const auto query = symbol<entry::Query>(library, "posenc_plugin_query");
  Greeting g;
  if (!query) {
    g.message = "exports no posenc_plugin_query";
  } else if (const posenc_plugin_info* info = query(); !info) {
    g.message = "posenc_plugin_query returned NULL";
  } else if (info->abi_version < 1 || info->abi_version > POSENC_PLUGIN_ABI_VERSION) {
    g.message = "built for ABI version " + std::to_string(info->abi_version) + ", this posenc reads versions 1 to " +
                std::to_string(POSENC_PLUGIN_ABI_VERSION);
  } else if (const auto bad = checked_declarations(*info, g)) {
    g.message = *bad;
  } else {
    g.ok = true;
    g.message = std::string(info->name ? info->name : "(unnamed)") + " " + (info->version ? info->version : "");
    for (std::size_t e = 0; e < kEntryPointSymbols.size(); ++e) {
      if (dlsym(library, kEntryPointSymbols[e])) g.exports |= bit_of(static_cast<EntryPoint>(e));
    }
  }
  if (!g.ok) library = nullptr;
  return g;
}

}  // namespace

void serve(const std::string& path, int socket, std::size_t memory_budget) {
  void* library = nullptr;
  const Greeting greeting = greet(path, library, memory_budget);
  std::fflush(nullptr);
  if (send_message(socket, encode(greeting), std::nullopt) != Transfer::done || !library) _exit(0);
  std::string message;
  while (receive_message(socket, message, std::nullopt) == Transfer::done) {
    const std::optional<std::vector<Request>> batch = decode_requests(message);
    if (!batch) _exit(4);
    for (const Request& request : *batch) {
      Reply reply = perform(library, request, memory_budget);
      std::fflush(nullptr);  // whatever the plugin printed through stdio reaches the memory file now
      struct stat printed {};
      reply.printed = fstat(STDOUT_FILENO, &printed) == 0 ? static_cast<std::uint64_t>(printed.st_size) : 0;
      if (send_message(socket, encode(reply), std::nullopt) != Transfer::done) _exit(0);
    }
  }
  _exit(0);
}

}  // namespace posenc::conformance
