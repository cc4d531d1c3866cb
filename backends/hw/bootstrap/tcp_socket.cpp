#include "backends/hw/bootstrap/tcp_socket.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace railcheck::hw {

Fd& Fd::operator=(Fd&& o) noexcept {
  if (this != &o) {
    reset();
    fd_ = std::exchange(o.fd_, -1);
  }
  return *this;
}

void Fd::reset() {
  if (fd_ >= 0) ::close(fd_);  // nothing useful to do if close fails: the fd is gone either way
  fd_ = -1;
}

Error socket_error(const char* call, const std::string& where, int err) {
  return Error{fmt::format("{}({}) failed: {}", call, where, std::strerror(err)), ""};
}

namespace {

Result<Fd> new_socket(const std::string& where) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return socket_error("socket", where, errno);
  return Fd(fd);
}

// The bootstrap sends small frames that the peer waits on: no Nagle delay.
std::optional<Error> no_delay(const Fd& fd, const std::string& where) {
  const int one = 1;
  if (::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) {
    return socket_error("setsockopt(TCP_NODELAY)", where, errno);
  }
  return std::nullopt;
}

}  // namespace

Result<Listener> listen_on(const SocketAddress& at) {
  const std::string where = at.to_string();
  auto fd = new_socket(where);
  if (!fd) return fd.error();
  const int one = 1;
  if (::setsockopt(fd->get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0) {
    return socket_error("setsockopt(SO_REUSEADDR)", where, errno);
  }
  const sockaddr_in sa = at.to_sockaddr();
  if (::bind(fd->get(), reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0) {
    Error e = socket_error("bind", where, errno);
    if (errno == EADDRINUSE) e.hint = "another process holds this port; pick another, or port 0 to let the kernel pick";
    return e;
  }
  if (::listen(fd->get(), SOMAXCONN) != 0) return socket_error("listen", where, errno);
  sockaddr_in bound{};
  socklen_t len = sizeof bound;
  if (::getsockname(fd->get(), reinterpret_cast<sockaddr*>(&bound), &len) != 0) {
    return socket_error("getsockname", where, errno);
  }
  return Listener{std::move(fd).value(), SocketAddress::from_sockaddr(bound)};
}

Result<std::optional<Fd>> accept_one(const Listener& l) {
  const int fd = ::accept4(l.fd.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (fd < 0) {
    // A connection that was reset while queued is the peer's problem, not the listener's.
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNABORTED) {
      return std::optional<Fd>{};
    }
    return socket_error("accept4", "listener " + l.bound.to_string(), errno);
  }
  Fd accepted(fd);
  if (auto e = no_delay(accepted, "accepted on " + l.bound.to_string())) return *e;
  return std::optional<Fd>{std::move(accepted)};
}

Result<PendingConnect> start_connect(const SocketAddress& to) {
  const std::string where = to.to_string();
  auto fd = new_socket(where);
  if (!fd) return fd.error();
  if (auto e = no_delay(fd.value(), where)) return *e;
  const sockaddr_in sa = to.to_sockaddr();
  PendingConnect pc{std::move(fd).value(), 0};
  if (::connect(pc.fd.get(), reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0 && errno != EINPROGRESS) {
    pc.failed_errno = errno;
  }
  return pc;
}

int connect_errno(const Fd& fd) {
  int err = 0;
  socklen_t len = sizeof err;
  if (::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) return errno;
  return err;
}

Result<IoResult> send_some(const Fd& fd, std::span<const std::uint8_t> bytes, const std::string& peer) {
  const ssize_t n = ::send(fd.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return IoResult{0, true, false};
    return socket_error("send", peer, errno);
  }
  return IoResult{static_cast<std::size_t>(n), false, false};
}

Result<IoResult> recv_some(const Fd& fd, std::span<std::uint8_t> into, const std::string& peer) {
  const ssize_t n = ::recv(fd.get(), into.data(), into.size(), 0);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return IoResult{0, true, false};
    return socket_error("recv", peer, errno);
  }
  return IoResult{static_cast<std::size_t>(n), false, n == 0};
}

std::string peer_address(const Fd& fd) {
  sockaddr_in sa{};
  socklen_t len = sizeof sa;
  if (::getpeername(fd.get(), reinterpret_cast<sockaddr*>(&sa), &len) != 0 || sa.sin_family != AF_INET) {
    return "unknown peer";
  }
  return SocketAddress::from_sockaddr(sa).to_string();
}

}  // namespace railcheck::hw
