// The wire decoders: a peer's bytes are untrusted. The first byte picks the decoder, the rest is
// its input: the connection handle (engine/handshake), the bootstrap stream framing
// (engine/bootstrap), the proxy share (engine/plan) and the libfabric control messages
// (backends/hw/libfabric).
#include <span>

#include "backends/hw/libfabric/control_codec.hpp"
#include "engine/bootstrap/bootstrap_codec.hpp"
#include "engine/handshake/handle_codec.hpp"
#include "engine/plan/proxy_share.hpp"
#include "fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::span<const std::uint8_t> rest(data + 1, size - 1);
  switch (data[0] % 4) {
    case 0:
      (void)railcheck::decode_handle(rest);
      break;
    case 1: {
      // A stream: decode frames from the front until one is incomplete or bad.
      std::span<const std::uint8_t> buf = rest;
      for (int i = 0; i < 1024; ++i) {
        auto f = railcheck::bootstrap::decode_frame(buf);
        if (!f || !f.value()) break;
        if (f.value()->consumed == 0 || f.value()->consumed > buf.size()) __builtin_trap();
        buf = buf.subspan(f.value()->consumed);
      }
      break;
    }
    case 2:
      (void)railcheck::plan::decode_proxy_share(rest);
      break;
    case 3:
      (void)railcheck::fabric::decode_control(rest);
      break;
  }
  return 0;
}
