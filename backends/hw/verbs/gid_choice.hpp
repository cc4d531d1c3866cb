#pragma once
// Which GID table entry addresses this port. On RoCE the table holds one entry per IP address
// and RoCE version; NCCL's IB transport prefers RoCE v2 with an IPv4-mapped address
// (::ffff:a.b.c.d), since v2 is routable over IP and v1 is not. On IB, index 0 (the port GID
// built from the subnet prefix and the port GUID) is the one to use.
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "engine/core/qp_endpoint.hpp"

namespace railcheck::hw::verbs {

enum class GidType : std::uint8_t { Ib, RoceV1, RoceV2 };

struct GidEntry {
  std::uint32_t index = 0;
  Gid gid{};
  GidType type = GidType::Ib;
};

bool is_zero(const Gid& g);
bool is_ipv4_mapped(const Gid& g);   // ::ffff:0:0/96
bool is_link_local(const Gid& g);    // fe80::/64
std::string format_gid(const Gid& g);

// The best entry for a port whose link layer is Ethernet (RoCE) or InfiniBand; nothing when the
// table holds no usable entry (all zero, or only link-local v1 on RoCE).
std::optional<GidEntry> choose_gid(std::span<const GidEntry> table, bool ethernet);

}  // namespace railcheck::hw::verbs
