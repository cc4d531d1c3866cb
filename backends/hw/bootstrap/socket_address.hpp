#pragma once
// An IPv4 "host:port" as the bootstrap passes it around: parsed once, printed the same way in
// every message. Only numeric IPv4 is accepted (no name lookup: a bootstrap that blocks in
// getaddrinfo cannot honour its timeout).
#include <netinet/in.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/core/result.hpp"

namespace railcheck::hw {

struct SocketAddress {
  std::uint32_t ipv4 = 0;  // host byte order
  std::uint16_t port = 0;  // host byte order; 0 = let the kernel pick (listeners only)

  std::string to_string() const;
  sockaddr_in to_sockaddr() const;
  static SocketAddress from_sockaddr(const sockaddr_in& sa);
  bool operator==(const SocketAddress&) const = default;
};

// "127.0.0.1:5000" or "127.0.0.1:0". Errors name the text and what was wrong with it.
Result<SocketAddress> parse_socket_address(std::string_view text);

}  // namespace railcheck::hw
