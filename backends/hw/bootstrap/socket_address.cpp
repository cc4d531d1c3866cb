#include "backends/hw/bootstrap/socket_address.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <charconv>

namespace railcheck::hw {

std::string SocketAddress::to_string() const {
  return fmt::format("{}.{}.{}.{}:{}", ipv4 >> 24, (ipv4 >> 16) & 0xFF, (ipv4 >> 8) & 0xFF, ipv4 & 0xFF, port);
}

sockaddr_in SocketAddress::to_sockaddr() const {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  sa.sin_addr.s_addr = htonl(ipv4);
  return sa;
}

SocketAddress SocketAddress::from_sockaddr(const sockaddr_in& sa) {
  return SocketAddress{ntohl(sa.sin_addr.s_addr), ntohs(sa.sin_port)};
}

Result<SocketAddress> parse_socket_address(std::string_view text) {
  const auto bad = [&](const char* why) {
    return Error{fmt::format("bad socket address \"{}\": {}", text, why),
                 "write it as <IPv4>:<port>, e.g. 127.0.0.1:29500 (port 0 lets the kernel pick)"};
  };
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos) return bad("no ':' before the port");
  const std::string host(text.substr(0, colon));
  const std::string_view port_text = text.substr(colon + 1);
  in_addr addr{};
  if (host.empty() || inet_pton(AF_INET, host.c_str(), &addr) != 1)
    return bad("the host is not a numeric IPv4 address");
  unsigned port = 0;
  const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || ec != std::errc{} || end != port_text.data() + port_text.size() || port > 65535) {
    return bad("the port is not a number in 0..65535");
  }
  return SocketAddress{ntohl(addr.s_addr), static_cast<std::uint16_t>(port)};
}

}  // namespace railcheck::hw
