#pragma once
// A WRITE_IMM transfer on SimGrid: rank 0 posts the pieces of a sharded write, one RC-like QP
// per (NIC, receiver), each NIC on its own rail (SimPlatform); every receiver's ImmCounter
// completes when its last piece lands. Two transports:
//   RC   a QP delivers its pieces in posting order (a piece that finishes early waits for its
//        predecessors, as an RC responder NAKs out-of-sequence packets);
//   SRD  reliable but unordered: packets are sprayed over many paths, so each piece lands after
//        a seeded random extra delay in [0, spray_skew) and no order is kept.
// Presets: ConnectX-7 (1 x 400 Gb/s per GPU, RC) and EFA (4 x 100 or 2 x 200 Gb/s per GPU, SRD),
// from models/nic_preset.cpp.
#include <cstdint>
#include <vector>

#include "engine/core/result.hpp"
#include "engine/core/time.hpp"
#include "engine/imm/imm_counter.hpp"
#include "engine/imm/nic_sharding.hpp"
#include "models/nic_preset.hpp"

namespace railcheck::sim {

enum class ImmTransport : std::uint8_t { Rc, Srd };

struct ImmTransferSpec {
  NicPreset nic;
  std::uint32_t nics_per_gpu = 1;
  ImmTransport transport = ImmTransport::Rc;
  imm::WriteShape shape;
  imm::Regions regions;
  imm::ShardBy shard_by = imm::ShardBy::Bytes;
  std::uint32_t pinned_nic = 0;
  std::uint64_t max_write_bytes = 1 << 20;  // ShardRule::max_piece_bytes
  std::uint32_t send_window = 16;           // WRITE_IMMs outstanding per QP
  Nanos spray_skew = us(20);                // SRD only: the spread of per-piece extra delay
};

struct ImmTransferResult {
  std::uint32_t writes = 0;                   // WRITE_IMMs posted, over all NICs
  std::vector<Nanos> completion;              // per receiver: when its ImmCounter fired
  Nanos finished{};                           // the last receiver's completion
  Nanos ideal{};                              // bytes / aggregate NIC rate + one-way latency
  std::uint32_t out_of_order = 0;             // landings after a later-posted write to the same receiver
  std::vector<imm::ImmShortfall> shortfalls;  // from each counter's audit; empty on success
};

// Shards with the engine's rule, runs on a fresh SimGrid engine. Deterministic in (spec, seed).
Result<ImmTransferResult> simulate_imm_transfer(const ImmTransferSpec& spec, std::uint64_t seed);

// The spec's NIC count and transport from a preset name: cx7-400g -> 1 NIC, RC; efa-100g -> 4,
// SRD; efa-200g -> 2, SRD (seed: p5 has 4 x 100 Gb/s EFA per GPU, p5en 2 x 200 Gb/s).
Result<ImmTransferSpec> preset_transfer(std::string_view preset, imm::WriteShape shape, imm::Regions regions);

}  // namespace railcheck::sim
