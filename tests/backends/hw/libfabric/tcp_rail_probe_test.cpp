// The kernel-answered rail probe (backends/hw/libfabric/tcp_rail_probe.hpp) on loopback: the
// port rides the endpoint, an answer comes back with its nonce, a stopped listener process still
// answers (its kernel does), and nothing answers where nobody listens or after forget().
#include "backends/hw/libfabric/tcp_rail_probe.hpp"

#include <arpa/inet.h>
#include <rdma/fabric.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <thread>

#include "backends/hw/libfabric/endpoint_address.hpp"

using namespace railcheck;
using namespace railcheck::fabric;

namespace {

QpEndpoint loopback_endpoint() {
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(4242);
  inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
  std::uint8_t raw[sizeof(sin)];
  std::memcpy(raw, &sin, sizeof(sin));
  auto ep = encode_endpoint(raw, FI_SOCKADDR_IN);
  REQUIRE(ep.ok());
  return ep.value();
}

// Answers collected within `wait`, polling as FabricConnection::progress() does.
std::vector<ProbeAnswer> answers_within(TcpRailProbes& p, std::chrono::milliseconds wait) {
  std::vector<ProbeAnswer> got;
  const auto until = std::chrono::steady_clock::now() + wait;
  while (std::chrono::steady_clock::now() < until && !p.idle()) p.collect(got);
  return got;
}

}  // namespace

TEST_CASE("tcp rail probe: the port rides an IPv4 endpoint and the libfabric address is unchanged", "[tcp_probe]") {
  QpEndpoint ep = loopback_endpoint();
  CHECK(carries_probe_port(ep));
  CHECK(probe_port_of(ep) == 0);  // what a backend before issue 28 sends
  set_probe_port(ep, 51234);
  CHECK(probe_port_of(ep) == 51234);
  auto raw = decode_endpoint(ep);
  REQUIRE(raw.ok());
  sockaddr_in sin{};
  std::memcpy(&sin, raw.value().data(), sizeof(sin));
  CHECK(ntohs(sin.sin_port) == 4242);

  QpEndpoint name;
  name.qpn = static_cast<std::uint32_t>(AddressKind::Name) << 16;
  set_probe_port(name, 51234);
  CHECK_FALSE(carries_probe_port(name));
  CHECK(probe_port_of(name) == 0);
}

TEST_CASE("tcp rail probe: a probe to a listening rail is answered with its nonce", "[tcp_probe]") {
  const QpEndpoint local = loopback_endpoint();
  TcpRailProbes listener(2, 4);
  auto port = listener.listen(1, local);
  REQUIRE(port.ok());
  QpEndpoint remote = local;
  set_probe_port(remote, port.value());

  TcpRailProbes prober(2, 4);
  CHECK_FALSE(prober.can_probe(1));
  REQUIRE(prober.set_ends(1, local, remote));
  CHECK(prober.idle());
  prober.send(1, 77);
  CHECK_FALSE(prober.idle());
  const auto got = answers_within(prober, std::chrono::milliseconds(2000));
  REQUIRE(got.size() == 1);
  CHECK(got[0].rail == 1);
  CHECK(got[0].nonce == 77);
  CHECK(prober.idle());
  CHECK(prober.counts(1).sent == 1);
  CHECK(prober.counts(1).answered == 1);
  CHECK(prober.counts(0).sent == 0);
}

TEST_CASE("tcp rail probe: a peer advertising no port cannot be probed and a refused probe is no answer",
          "[tcp_probe]") {
  const QpEndpoint local = loopback_endpoint();
  TcpRailProbes prober(1, 4);
  CHECK_FALSE(prober.set_ends(0, local, local));  // psn 0: an older peer
  CHECK_FALSE(prober.can_probe(0));
  prober.send(0, 1);
  CHECK(prober.idle());
  CHECK(prober.counts(0).sent == 0);

  // A port nobody listens on: the kernel refuses (RST), which is not the rail answering.
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in at{};
  at.sin_family = AF_INET;
  inet_pton(AF_INET, "127.0.0.1", &at.sin_addr);
  socklen_t len = sizeof(at);
  REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&at), sizeof(at)) == 0);
  REQUIRE(getsockname(fd, reinterpret_cast<sockaddr*>(&at), &len) == 0);
  QpEndpoint remote = local;
  set_probe_port(remote, ntohs(at.sin_port));  // bound, never listening
  REQUIRE(prober.set_ends(0, local, remote));
  prober.send(0, 2);
  CHECK(answers_within(prober, std::chrono::milliseconds(1000)).empty());
  CHECK(prober.idle());
  CHECK(prober.counts(0).answered == 0);
  close(fd);
}

TEST_CASE("tcp rail probe: a stopped listener process still answers because its kernel does", "[tcp_probe]") {
  int ports[2];
  REQUIRE(pipe(ports) == 0);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    alarm(20);
    TcpRailProbes listener(1, 4);
    auto port = listener.listen(0, loopback_endpoint());
    const std::uint16_t p = port ? port.value() : 0;
    if (write(ports[1], &p, sizeof(p)) != sizeof(p)) _exit(2);
    raise(SIGSTOP);  // stopped for the whole probe: its process answers nothing
    _exit(0);
  }
  std::uint16_t port = 0;
  REQUIRE(read(ports[0], &port, sizeof(port)) == sizeof(port));
  REQUIRE(port != 0);
  int status = 0;
  REQUIRE(waitpid(child, &status, WUNTRACED) == child);
  REQUIRE(WIFSTOPPED(status));

  const QpEndpoint local = loopback_endpoint();
  QpEndpoint remote = local;
  set_probe_port(remote, port);
  TcpRailProbes prober(1, 8);
  REQUIRE(prober.set_ends(0, local, remote));
  // More probes than a listen backlog of a few would take: TCP_DEFER_ACCEPT keeps the resets
  // from ever reaching the stopped process's accept queue.
  for (std::uint64_t n = 1; n <= 64; ++n) {
    prober.send(0, n);
    const auto got = answers_within(prober, std::chrono::milliseconds(2000));
    REQUIRE(got.size() == 1);
    CHECK(got[0].nonce == n);
  }
  kill(child, SIGKILL);
  waitpid(child, &status, 0);
  close(ports[0]);
  close(ports[1]);
}

TEST_CASE("tcp rail probe: forget drops what is out and for good stops probing the rail", "[tcp_probe]") {
  const QpEndpoint local = loopback_endpoint();
  TcpRailProbes listener(1, 4);
  auto port = listener.listen(0, local);
  REQUIRE(port.ok());
  QpEndpoint remote = local;
  set_probe_port(remote, port.value());
  TcpRailProbes prober(1, 2);
  REQUIRE(prober.set_ends(0, local, remote));
  prober.send(0, 1);
  prober.send(0, 2);
  prober.send(0, 3);  // the oldest is dropped: at most max_out stay out
  prober.forget(0, false);
  CHECK(prober.idle());
  CHECK(prober.can_probe(0));
  std::vector<ProbeAnswer> got;
  prober.collect(got);
  CHECK(got.empty());
  prober.forget(0, true);
  CHECK_FALSE(prober.can_probe(0));
  prober.send(0, 4);
  CHECK(prober.idle());
}

TEST_CASE("tcp rail probe: a stray connection that sends data is drained from the listener", "[tcp_probe]") {
  const QpEndpoint local = loopback_endpoint();
  TcpRailProbes listener(1, 4);
  auto port = listener.listen(0, local);
  REQUIRE(port.ok());
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port.value());
  inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
  REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to)) == 0);
  REQUIRE(write(fd, "x", 1) == 1);  // data: TCP_DEFER_ACCEPT queues it for accept
  std::uint64_t strays = 0;
  for (int i = 0; i < 200 && strays == 0; ++i) {
    listener.drain_listeners();
    strays = listener.counts(0).strays;
    if (strays == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  CHECK(strays == 1);
  close(fd);
}
