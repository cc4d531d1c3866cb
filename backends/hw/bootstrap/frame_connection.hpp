#pragma once
// One bootstrap TCP connection and the frames on it (tcp_bootstrap.cpp's frame I/O): the bytes
// still to write, the bytes read but not yet a whole frame, and a poll round's reading,
// opening (with the job key) or decoding (without), and writing. No protocol decision here.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backends/hw/bootstrap/tcp_socket.hpp"
#include "engine/bootstrap/bootstrap_codec.hpp"
#include "engine/bootstrap/frame_auth.hpp"

namespace railcheck::hw {

// One TCP connection: bytes to write, bytes read but not yet a whole frame.
struct FrameConnection {
  Fd fd;
  std::string peer;            // for errors: "root 127.0.0.1:29500"
  std::string remote;          // the other end's address, for refusal logs
  bool authenticated = false;  // it has delivered an authentic frame
  std::uint64_t refused = 0;
  bool connecting = false;
  std::vector<std::uint8_t> in;
  std::vector<std::uint8_t> out;
  std::size_t out_done = 0;
  bool close_when_flushed = false;

  bool pending() const { return out_done < out.size(); }
  bool open() const { return fd.valid(); }
};

// One frame read from a connection: authentic (or, without a key, decoded), or refused.
struct IncomingFrame {
  std::optional<bootstrap::Frame> frame;
  std::uint32_t sender = 0;  // with a key: who sealed it
  std::optional<bootstrap::FrameRefusal> refusal;
};

// What a connection's poll round produced.
struct ConnectionNews {
  std::vector<IncomingFrame> frames;
  std::optional<std::string> lost;  // closed or failed, and how
  int connect_errno = 0;            // the connect failed with this errno
};

// One poll round of `c` with these revents: finishes a pending connect, reads what is there
// and cuts it into frames (opened by `opener`, the identity whose key checks this connection's
// frames; decoded as plain frames when it is nullptr), then writes what is pending.
ConnectionNews service_connection(FrameConnection& c, short revents, bootstrap::FrameAuth* opener);

// Writes as much of c.out as the socket takes; a failure is news.lost.
void flush_connection(FrameConnection& c, ConnectionNews& news);

// A frame as bytes on the wire: sealed by `sealer`, or plain (wire v1) when it is nullptr.
std::vector<std::uint8_t> seal_frame(bootstrap::FrameAuth* sealer, std::uint32_t to, const bootstrap::Frame& f);

// Closes `c` once it was asked to close and has nothing left to write.
void close_if_done(FrameConnection& c);

}  // namespace railcheck::hw
