#pragma once
// A delay fault for the netns lab where the kernel has no netem (sch_netem is not built into
// every kernel; this project's CI VM has none): an NFQUEUE rule in one side's namespace hands the
// packets that side sends on one rail to a queue, and a child process of ours accepts each one
// `delay` + [0, `spread`) after it was queued, never before the packet queued ahead of it. So the
// rail behaves as a link whose one-way latency grew, in order, as the sim's jittered link does
// (backends/sim/wire.cpp: extra latency plus a uniform draw, packets landing in PSN order).
//
// The child is started before the fault (binding a queue takes a fork and a few netlink round
// trips) and gets no packet until engage() adds the rule; disengage() removes it, and the packets
// already held still leave at their times. The draws come from the lab run's seed.
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "backends/hw/conform/netns_lab.hpp"
#include "engine/core/result.hpp"

namespace railcheck::conform {

struct DelaySpec {
  std::chrono::nanoseconds delay{};   // added to every packet
  std::chrono::nanoseconds spread{};  // plus a uniform draw in [0, spread)
  std::uint64_t seed = 1;
};

class PacketDelayer {
 public:
  // A child in `side`'s namespace bound to NFQUEUE `queue`, ready when this returns; an Error says
  // what refused (no NFQUEUE support in the kernel, not root).
  static Result<std::unique_ptr<PacketDelayer>> start(const NetnsSide& side, int rail, std::uint16_t queue,
                                                      const DelaySpec& spec);
  // Stops the child (disengaging first if engaged). Packets it still holds are accepted at once.
  ~PacketDelayer();
  PacketDelayer(const PacketDelayer&) = delete;
  PacketDelayer& operator=(const PacketDelayer&) = delete;

  // `iptables -A OUTPUT -o <rail's interface> -j NFQUEUE`: from now the side's packets on the rail
  // wait. Takes effect when it returns.
  Result<bool> engage();
  // The rule removed: new packets go straight out; held ones at their times.
  Result<bool> disengage();

 private:
  PacketDelayer() = default;
  std::vector<std::string> rule(const char* op) const;

  std::string netns_;
  std::string dev_;
  std::uint16_t queue_ = 0;
  pid_t child_ = -1;
  int stop_fd_ = -1;  // closing it tells the child to finish
  bool engaged_ = false;
};

}  // namespace railcheck::conform
