#pragma once
// PRIVATE to backends/hw/libfabric: the rail-liveness probe (engine ProbeRail) on providers whose
// rails are TCP (tcp;ofi_rxm). docs/failover.md, "The detector on real transports", says why.
//
// Why not fi_read/fi_write: on tcp;ofi_rxm an RMA operation is emulated by the *target process's*
// progress thread, so a peer process that is SIGSTOPped for 200 ms answers nothing and a probe over
// the provider would turn a stall into a failover. The probe must be answered below the
// application, as an RDMA NIC answers a zero-byte WRITE. Here the peer's *kernel* answers it:
//
//   - The receiver listens on one TCP port per rail, bound to that rail's own address, and
//     advertises the port inside the rail's endpoint (endpoint_address.hpp: psn of an IPv4
//     endpoint; 0 = no probe port, what backends before issue 28 send). The port travels with the
//     existing handshake: the handle carries rail 0's endpoint, StandbyParams the standbys'.
//   - A probe is a non-blocking connect() from the sender's rail address to that port: same
//     address pair, same interface, so it dies with the rail's link. The peer's kernel answers the
//     SYN with a SYN-ACK at once, whatever its process is doing; the connect completing is the
//     answer. The socket is then reset (SO_LINGER 0: no TIME_WAIT, no ephemeral port held).
//   - The listener has TCP_DEFER_ACCEPT, so a handshake that carries no data never reaches its
//     accept queue; the reset removes the half-open entry. A stopped peer's queue cannot fill.
//
// A byte sent on a standing connection and judged by TCP_INFO's ACK counters was tried and
// rejected: Linux ACKs the first 16 segments at once and then delays each ACK by 40 ms or more
// (measured on 6.18: 40-52 ms per 1-byte probe every 5 ms), which would raise the probe timeout
// above the detection budget and cannot be switched off from the sender's side.
#include <netinet/in.h>
#include <poll.h>

#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/qp_endpoint.hpp"
#include "engine/core/result.hpp"

namespace railcheck::fabric {

// Whether the endpoint is IPv4 (a TCP rail), the only kind with a probe port.
bool carries_probe_port(const QpEndpoint& ep);
// The probe port an IPv4 rail endpoint advertises; 0 when it advertises none (not IPv4, or an
// older peer).
std::uint16_t probe_port_of(const QpEndpoint& ep);
// Writes `port` into an IPv4 endpoint (a no-op for other kinds, which carry no probe port).
void set_probe_port(QpEndpoint& ep, std::uint16_t port);

struct ProbeAnswer {
  std::uint32_t rail = 0;
  std::uint64_t nonce = 0;
};

struct RailProbeCounts {
  std::uint64_t sent = 0;
  std::uint64_t answered = 0;
  std::uint64_t strays = 0;  // connections that carried data to a listener, closed unread
};

// The probe sockets of one connection, one slot per rail. Not thread-safe (FabricConnection's
// caller holds it). Every call is non-blocking.
class TcpRailProbes {
 public:
  // `max_out`: probes kept per rail awaiting an answer, oldest dropped first. The detector
  // matches an answer to at most misses + 1 probes (rail_liveness.hpp), so misses + 2 loses none.
  TcpRailProbes(std::size_t rails, std::size_t max_out);
  ~TcpRailProbes();
  TcpRailProbes(const TcpRailProbes&) = delete;
  TcpRailProbes& operator=(const TcpRailProbes&) = delete;

  // ---- setup (the receiver listens, the sender learns both ends) ----
  // Receiver: listens on `local`'s IPv4 address; returns the port to advertise.
  Result<std::uint16_t> listen(std::uint32_t rail, const QpEndpoint& local);
  // Sender: probes on `rail` leave from `local`'s address and go to `remote`'s probe port.
  // False when `remote` advertises none (the rail cannot be probed).
  bool set_ends(std::uint32_t rail, const QpEndpoint& local, const QpEndpoint& remote);
  bool can_probe(std::uint32_t rail) const;

  // ---- probing ----
  // Starts probe `nonce`. A probe that cannot even start (no route: the local link is down)
  // is simply never answered, as a WRITE into a dead link is not.
  void send(std::uint32_t rail, std::uint64_t nonce);
  // Appends the probes answered since the last call. One poll(2) while probes are out, no
  // system call otherwise.
  void collect(std::vector<ProbeAnswer>& out);
  // Drops every probe still out on the rail (its QP went to ERR, or the rail was cut). With
  // `for_good`, the rail is never probed again (cut_rail: a dead link answers nothing).
  void forget(std::uint32_t rail, bool for_good);
  bool idle() const { return outstanding_ == 0; }
  // Receiver: accepts and closes whatever reached a listener's accept queue. A probe never
  // does (it carries no data); a stray client that sends something would, and a full queue
  // would make the kernel drop the SYNs of real probes.
  void drain_listeners();

  RailProbeCounts counts(std::uint32_t rail) const { return rails_.at(rail).counts; }

 private:
  struct Out {
    std::uint64_t nonce = 0;
    int fd = -1;
  };
  struct Rail {
    int listen_fd = -1;
    bool silenced = false;
    bool has_ends = false;
    sockaddr_in local{};
    sockaddr_in remote{};
    std::deque<Out> out;  // oldest first
    RailProbeCounts counts;
  };
  void close_probe(Rail& r, std::size_t i);

  std::vector<Rail> rails_;
  std::vector<pollfd> pollfds_;  // collect()'s scratch
  std::size_t max_out_;
  std::size_t outstanding_ = 0;
};

}  // namespace railcheck::fabric
