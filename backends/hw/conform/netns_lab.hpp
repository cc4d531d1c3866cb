#pragma once
// A two-host lab on one machine for the conformance suite's real link-failure case: two network
// namespaces joined by a veth pair per rail (two, or up to kMaxRails), so that one rail's link can be taken down
// under a running transfer the way a cable pull or a switch port failure would — something the
// endpoint-cut failover only imitates. Needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN) and
// iproute2; every failure says which of the two is missing or what the kernel refused.
//
// Addresses are link-local (169.254.0.0/16, RFC 3927) so the lab can never shadow a route to a
// real network on the host it runs on.
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/result.hpp"

namespace railcheck::conform {

struct NetnsRail {
  std::string if_name;  // this side's end of the rail's veth pair
  std::string address;  // without the prefix length, e.g. "169.254.1.1"
};

struct NetnsSide {
  std::string netns;
  std::vector<NetnsRail> rails;  // NetnsLab::create's count
};

class NetnsLab {
 public:
  // The longest prefix that keeps every interface name ("<prefix>r0a") within IFNAMSIZ - 1.
  static constexpr std::size_t kMaxPrefix = 12;

  static constexpr std::size_t kMaxRails = 4;

  // Namespaces "<prefix>a" and "<prefix>b" joined by `rails` veth pairs (2 by default):
  //   rail 0: <prefix>r0a 169.254.1.1/30 (side a) <-> <prefix>r0b 169.254.1.2/30 (side b)
  //   rail 1: <prefix>r1a 169.254.2.1/30 (side a) <-> <prefix>r1b 169.254.2.2/30 (side b)
  //   rail r: 169.254.<r+1>.1 and .2
  // with lo and every link up. The prefix is letters and digits, at most kMaxPrefix of them.
  // On failure nothing is left behind.
  static Result<std::unique_ptr<NetnsLab>> create(const std::string& prefix, std::size_t rails = 2);
  std::size_t rails() const { return sides_[0].rails.size(); }

  // Deletes both namespaces (the veth pairs go with them) and any veth end still in the
  // namespace it was created in. Never throws; safe on a half-built lab.
  ~NetnsLab();
  NetnsLab(const NetnsLab&) = delete;
  NetnsLab& operator=(const NetnsLab&) = delete;

  const NetnsSide& side(int i) const { return sides_.at(static_cast<std::size_t>(i)); }  // 0 = a, 1 = b

  // Makes every rail a link of `gbps` each way: a token-bucket qdisc (`tc qdisc replace ... tbf`) on
  // both ends' egress, a bucket of kShapeBurstBytes and a queue long enough that the lab's streams
  // never overflow it (a shaped rail delays, it never drops). A veth pair copies in memory, so an
  // unshaped lab stream runs as fast as its receiving side's CPU, and on a shared VM that speed
  // moves by tens of percent from one stretch of a stream to the next (docs/validation.md); a
  // shaped rail is bound by its rate, as a NIC's stream is by its wire. Needs sch_tbf in the kernel.
  Result<bool> limit_rate(double gbps);
  static constexpr std::uint32_t kShapeBurstBytes = 16 * 1024;
  // What limit_rate set, 0 while the rails run unshaped.
  double rate_limit_gbps() const { return rate_limit_gbps_; }

 private:
  NetnsLab() = default;
  Result<bool> build(const std::string& prefix, std::size_t rails);

  std::array<NetnsSide, 2> sides_;
  std::vector<std::string> created_netns_;  // only what this lab added: a name clash is never deleted
  std::vector<std::string> unmoved_links_;  // veth ends still in the creating namespace
  double rate_limit_gbps_ = 0;
};

// Moves the calling thread into the named namespace (setns on /run/netns/<name>). Sockets and
// endpoints opened afterwards live there; ones opened before stay where they were, so call it
// before any libfabric endpoint is opened and before any thread is started.
Result<bool> enter_netns(const std::string& netns);

// Sets a link of the current namespace up or down with SIOCGIFFLAGS/SIOCSIFFLAGS. Nothing is
// exec'd, so it is safe in a process that has libfabric initialised (which does not survive fork).
Result<bool> set_link_up(const std::string& if_name, bool up);

// Runs `ip <args>` (posix_spawnp, no shell) and returns its stdout. A failure carries the command
// line and ip's stderr; a missing binary says to install iproute2. Waits at most 10 s.
Result<std::string> run_ip(const std::vector<std::string>& args);
// The same for `tc` (iproute2's traffic control: the lab's netem faults).
Result<std::string> run_tc(const std::vector<std::string>& args);
// The same for any iproute2 tool on PATH.
Result<std::string> run_tool(const std::string& tool, const std::vector<std::string>& args);

// A prefix unique to this process: "rc" + pid.
std::string default_netns_prefix();

}  // namespace railcheck::conform
