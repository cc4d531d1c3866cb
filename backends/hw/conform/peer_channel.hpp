#pragma once
// The line channel between `railcheck conform` and the peer process it starts (a socket pair
// inherited across exec): one text line per message, read with a deadline so a dead peer is
// an error, never a hang. This is the bootstrap's job in NCCL; here it also carries the case
// to run and each side's verdict.
#include <chrono>
#include <optional>
#include <string>

namespace railcheck::conform {

class PeerChannel {
 public:
  explicit PeerChannel(int fd) : fd_(fd) {}
  ~PeerChannel();
  PeerChannel(const PeerChannel&) = delete;
  PeerChannel& operator=(const PeerChannel&) = delete;

  bool send_line(const std::string& line);
  // A whole line (without '\n') if one arrives within `wait`; nullopt on timeout or EOF
  // (closed() tells which).
  std::optional<std::string> read_line(std::chrono::milliseconds wait);
  bool closed() const { return closed_; }

 private:
  int fd_;
  std::string buffer_;
  bool closed_ = false;
};

}  // namespace railcheck::conform
