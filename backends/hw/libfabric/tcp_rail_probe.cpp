#include "backends/hw/libfabric/tcp_rail_probe.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cassert>
#include <cerrno>
#include <cstring>

#include "backends/hw/libfabric/endpoint_address.hpp"

namespace railcheck::fabric {
namespace {

constexpr std::uint32_t kKindShift = 16;  // endpoint_address.hpp: qpn bits 23..16 are the kind

sockaddr_in ipv4_of(const QpEndpoint& ep, std::uint16_t port) {
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(port);
  std::memcpy(&sin.sin_addr.s_addr, ep.gid.data(), 4);
  return sin;
}

// Closes with a reset: an answered probe leaves no TIME_WAIT behind and holds no ephemeral port;
// one still connecting just stops.
void reset_close(int fd) {
  const linger now{1, 0};
  (void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &now, sizeof(now));
  (void)close(fd);
}

}  // namespace

bool carries_probe_port(const QpEndpoint& ep) {
  return (ep.qpn >> kKindShift) == static_cast<std::uint32_t>(AddressKind::Ipv4);
}

std::uint16_t probe_port_of(const QpEndpoint& ep) {
  if (!carries_probe_port(ep) || ep.psn > 0xFFFF) return 0;
  return static_cast<std::uint16_t>(ep.psn);
}

void set_probe_port(QpEndpoint& ep, std::uint16_t port) {
  if (carries_probe_port(ep)) ep.psn = port;
}

TcpRailProbes::TcpRailProbes(std::size_t rails, std::size_t max_out) : rails_(rails), max_out_(max_out) {
  assert(max_out_ >= 1);
}

TcpRailProbes::~TcpRailProbes() {
  for (Rail& r : rails_) {
    while (!r.out.empty()) close_probe(r, 0);
    if (r.listen_fd >= 0) (void)close(r.listen_fd);
  }
}

Result<std::uint16_t> TcpRailProbes::listen(std::uint32_t rail, const QpEndpoint& local) {
  Rail& r = rails_.at(rail);
  assert(r.listen_fd < 0 && "one listener per rail");
  if (!carries_probe_port(local))
    return Error{"the rail's endpoint is not an IPv4 address: no kernel-answered probe", ""};
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return Error{fmt::format("probe listener: socket: {}", std::strerror(errno)), ""};
  sockaddr_in at = ipv4_of(local, 0);
  socklen_t len = sizeof(at);
  // Handshakes without data never reach the accept queue (the prober resets them after the
  // SYN-ACK), so nobody has to accept, and a stopped process's queue cannot overflow.
  const int defer_s = 1;
  if (setsockopt(fd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &defer_s, sizeof(defer_s)) != 0 ||
      bind(fd, reinterpret_cast<const sockaddr*>(&at), sizeof(at)) != 0 || ::listen(fd, SOMAXCONN) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&at), &len) != 0) {
    const int err = errno;
    (void)close(fd);
    char text[INET_ADDRSTRLEN] = {};
    inet_ntop(AF_INET, &at.sin_addr, text, sizeof(text));
    return Error{fmt::format("probe listener on {}: {}", text, std::strerror(err)), ""};
  }
  r.listen_fd = fd;
  return static_cast<std::uint16_t>(ntohs(at.sin_port));
}

bool TcpRailProbes::set_ends(std::uint32_t rail, const QpEndpoint& local, const QpEndpoint& remote) {
  Rail& r = rails_.at(rail);
  const std::uint16_t port = probe_port_of(remote);
  r.has_ends = port != 0 && carries_probe_port(local);
  if (!r.has_ends) return false;
  r.local = ipv4_of(local, 0);
  r.remote = ipv4_of(remote, port);
  return true;
}

bool TcpRailProbes::can_probe(std::uint32_t rail) const {
  const Rail& r = rails_.at(rail);
  return r.has_ends && !r.silenced;
}

void TcpRailProbes::send(std::uint32_t rail, std::uint64_t nonce) {
  Rail& r = rails_.at(rail);
  if (!can_probe(rail)) return;
  ++r.counts.sent;
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  // From the rail's own address: the probe takes the rail's interface and dies with its link.
  // The port is picked at connect time, so probes do not exhaust ports bound but unused.
  const int one = 1;
  (void)setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one));
  if (bind(fd, reinterpret_cast<const sockaddr*>(&r.local), sizeof(r.local)) != 0 ||
      (connect(fd, reinterpret_cast<const sockaddr*>(&r.remote), sizeof(r.remote)) != 0 && errno != EINPROGRESS)) {
    // No route (the local link is down) or no port: unanswered, as a WRITE into a dead link.
    reset_close(fd);
    return;
  }
  if (r.out.size() >= max_out_) close_probe(r, 0);
  r.out.push_back(Out{nonce, fd});
  ++outstanding_;
}

void TcpRailProbes::collect(std::vector<ProbeAnswer>& out) {
  if (outstanding_ == 0) return;
  std::vector<pollfd>& fds = pollfds_;
  fds.clear();
  for (const Rail& r : rails_)
    for (const Out& o : r.out) fds.push_back(pollfd{o.fd, POLLOUT, 0});
  if (poll(fds.data(), fds.size(), 0) <= 0) return;
  std::size_t k = 0;
  for (std::uint32_t i = 0; i < rails_.size(); ++i) {
    Rail& r = rails_[i];
    for (std::size_t j = 0; j < r.out.size(); ++k) {
      if (fds[k].revents == 0) {
        ++j;
        continue;
      }
      int err = 0;
      socklen_t len = sizeof(err);
      // Only a completed handshake is an answer. A refusal (RST: the peer's listener is gone) or
      // an ICMP error says the peer cannot be probed there: no answer, as a failed WRITE.
      if (getsockopt(r.out[j].fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0) {
        out.push_back(ProbeAnswer{i, r.out[j].nonce});
        ++r.counts.answered;
      }
      close_probe(r, j);
    }
  }
}

void TcpRailProbes::drain_listeners() {
  for (Rail& r : rails_) {
    if (r.listen_fd < 0) continue;
    for (int fd; (fd = accept4(r.listen_fd, nullptr, nullptr, SOCK_CLOEXEC)) >= 0;) {
      ++r.counts.strays;
      reset_close(fd);
    }
  }
}

void TcpRailProbes::forget(std::uint32_t rail, bool for_good) {
  Rail& r = rails_.at(rail);
  while (!r.out.empty()) close_probe(r, 0);
  if (for_good) r.silenced = true;
}

void TcpRailProbes::close_probe(Rail& r, std::size_t i) {
  assert(i < r.out.size() && outstanding_ > 0);
  reset_close(r.out[i].fd);
  r.out.erase(r.out.begin() + static_cast<std::ptrdiff_t>(i));
  --outstanding_;
}

}  // namespace railcheck::fabric
