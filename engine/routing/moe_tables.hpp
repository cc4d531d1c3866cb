#pragma once
// MoE dispatch/combine send tables (seed, "MoE Kernel": why DeepEP sends fewer RDMA bytes).
//
// Flat: a token goes once to every rank that holds one of its experts (the rank sums its own
// experts' outputs before combine), over RDMA when that rank is on another node, NVLink when on
// the same node.
// Hierarchical (DeepEP's normal kernels): dispatch sends one RDMA copy per destination node,
// to the rail peer there (same local GPU index), which forwards it over NVLink to the node's
// other ranks that need it; combine mirrors it: the node's ranks reduce their partial sums over
// NVLink into the rail peer, which sends one RDMA copy back.
// So per (token, remote node) flat sends one RDMA copy per needing rank, hierarchical one.
#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/routing/moe_assignment.hpp"

namespace railcheck::routing {

enum class MoeScheme : std::uint8_t { Flat, Hierarchical };
enum class Fabric : std::uint8_t { Rdma, Nvlink };
std::string_view to_string(MoeScheme s);

// `tokens` token copies from one rank to another, in `stage` (0 first; a stage-1 message
// leaves its rank only once every stage-0 message into that rank has landed).
struct MoeMessage {
  std::uint32_t from = 0;
  std::uint32_t to = 0;
  Fabric via = Fabric::Rdma;
  std::uint8_t stage = 0;
  std::uint64_t tokens = 0;
};

struct MoePhase {
  std::vector<MoeMessage> messages;  // sorted by (stage, from, to); one per (stage, from, to)
  std::uint64_t rdma_tokens = 0;
  std::uint64_t nvlink_tokens = 0;
};

struct MoeTables {
  MoeScheme scheme = MoeScheme::Flat;
  MoePhase dispatch;
  MoePhase combine;
};

MoeTables build_moe_tables(const TokenAssignment& a, const MoeCluster& cluster, MoeScheme scheme);

}  // namespace railcheck::routing
