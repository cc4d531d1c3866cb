// The wire decoders: a peer's bytes are untrusted. The first byte picks the decoder, the rest is
// its input: the connection handle (engine/handshake), the bootstrap stream framing
// (engine/bootstrap), the proxy share (engine/plan), the libfabric control messages
// (backends/hw/libfabric) and the zero-buffer window handles a rank receives from its peers
// (backends/hw/cuda/zerobuf): one handle alone, and a whole communicator's set checked together.
#include <algorithm>
#include <span>
#include <vector>

#include "backends/hw/cuda/zerobuf/window_handle.hpp"
#include "backends/hw/libfabric/control_codec.hpp"
#include "engine/bootstrap/bootstrap_codec.hpp"
#include "engine/handshake/handle_codec.hpp"
#include "engine/plan/proxy_share.hpp"
#include "fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::span<const std::uint8_t> rest(data + 1, size - 1);
  switch (data[0] % 6) {
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
    case 4:
      (void)railcheck::hw::zerobuf::decode_window_handle(rest);
      break;
    case 5: {
      // One byte for this rank, then the blobs in turn, each a length byte and its bytes (at
      // most 16 blobs: more than the kernel's peer table, so the count check is reached too).
      if (rest.empty()) break;
      const std::uint32_t my_rank = rest[0];
      std::span<const std::uint8_t> buf = rest.subspan(1);
      std::vector<std::vector<std::uint8_t>> blobs;
      while (!buf.empty() && blobs.size() < 16) {
        const std::size_t len = std::min<std::size_t>(buf[0], buf.size() - 1);
        blobs.emplace_back(buf.begin() + 1, buf.begin() + 1 + static_cast<std::ptrdiff_t>(len));
        buf = buf.subspan(1 + len);
      }
      (void)railcheck::hw::zerobuf::decode_peer_handles(blobs, my_rank);
      break;
    }
  }
  return 0;
}
