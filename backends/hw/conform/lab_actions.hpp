#pragma once
// The lab parent's share of a fault schedule (lab_failover.hpp): impairments of a rail's egress
// (an nftables drop rule for loss, the packet delayer for delay spikes) and signals to side b,
// each made at its time by run_lab_failover. Side b makes the link changes itself.
#include <sys/types.h>

#include <map>
#include <memory>
#include <string>
#include <utility>

#include "backends/hw/conform/lab_failover.hpp"
#include "backends/hw/conform/netns_lab.hpp"
#include "backends/hw/conform/packet_delayer.hpp"
#include "engine/core/result.hpp"

namespace railcheck::conform {

// A rail's impairment on one side lives in its own nftables table, "railcheck_r<rail>", in that
// side's namespace.
std::string impairment_table(int rail);
// `nft` with `commands` inside side's namespace.
Result<std::string> nft_in(const NetnsSide& side, const std::string& commands);
// Every impairment of the lab removed (a run's own at its end, a crashed run's at the next start).
void clear_impairments(const NetnsLab& lab);

// The parent's impairments: a delayer per side and rail that has a delay fault (started before
// the run), and which sides' rails hold a loss rule now.
struct Impairments {
  std::map<std::pair<int, int>, std::unique_ptr<PacketDelayer>> delayers;
  std::map<std::pair<int, int>, bool> lossy;
};

// The parent's action `a`, made now; an Error says what the kernel or a tool refused. `receiver`
// is side b's process (the stall's signals).
Result<bool> make_action(const NetnsLab& lab, const LabAction& a, pid_t receiver, Impairments& imp);

}  // namespace railcheck::conform
