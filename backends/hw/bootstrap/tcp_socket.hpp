#pragma once
// Non-blocking TCP sockets for the bootstrap, every call checked: an error says which call
// failed, on which address, and errno's text (the rc_pingpong / fabtests habit).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include "backends/hw/bootstrap/socket_address.hpp"
#include "engine/core/result.hpp"

namespace railcheck::hw {

// Owns one file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void reset();

 private:
  int fd_ = -1;
};

// "what(address) failed: strerror(err)".
Error socket_error(const char* call, const std::string& where, int err);

// socket + SO_REUSEADDR + bind + listen, non-blocking. `bound` is the address the kernel
// actually bound (the picked port when `at.port` is 0).
struct Listener {
  Fd fd;
  SocketAddress bound;
};
Result<Listener> listen_on(const SocketAddress& at);

// accept4 of one pending connection, non-blocking. nullopt: none pending.
Result<std::optional<Fd>> accept_one(const Listener& l);

// Starts a non-blocking connect. The socket is writable once the connect has finished;
// connect_errno() then says whether it worked. `failed_errno` is set when connect() failed at
// once (loopback refuses a closed port immediately); both paths give the caller an errno.
struct PendingConnect {
  Fd fd;
  int failed_errno = 0;
};
Result<PendingConnect> start_connect(const SocketAddress& to);
// 0 when the connect finished well, else its errno (SO_ERROR; reading it clears it).
int connect_errno(const Fd& fd);

// One send/recv; `done` bytes moved (0 with would_block when the socket is not ready).
struct IoResult {
  std::size_t done = 0;
  bool would_block = false;
  bool eof = false;  // recv only: the peer closed its end
};
Result<IoResult> send_some(const Fd& fd, std::span<const std::uint8_t> bytes, const std::string& peer);
Result<IoResult> recv_some(const Fd& fd, std::span<std::uint8_t> into, const std::string& peer);

// The connected peer's "IPv4:port" (getpeername), for logs; "unknown peer" if the call fails.
std::string peer_address(const Fd& fd);

}  // namespace railcheck::hw
