#include "engine/imm/nic_sharding.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "engine/core/engine_assert.hpp"

namespace railcheck::imm {
namespace {

std::optional<Error> check_extent(const Extent& e, const Regions& regions) {
  if (e.receiver >= regions.dst_bytes.size())
    return Error{fmt::format("extent {}: receiver {} has no destination region ({} receivers)", e.index, e.receiver,
                             regions.dst_bytes.size()),
                 "register a region for every receiver"};
  if (e.src_offset > regions.src_bytes || e.length > regions.src_bytes - e.src_offset)
    return Error{fmt::format("extent {}: source [{}, {}) overruns the {}-byte source region", e.index, e.src_offset,
                             e.src_offset + e.length, regions.src_bytes),
                 ""};
  const std::uint64_t dst = regions.dst_bytes[e.receiver];
  if (e.dst_offset > dst || e.length > dst - e.dst_offset)
    return Error{fmt::format("extent {}: destination [{}, {}) overruns receiver {}'s {}-byte region", e.index,
                             e.dst_offset, e.dst_offset + e.length, e.receiver, dst),
                 ""};
  return std::nullopt;
}

// Even split in whole MTUs: NIC k gets ceil or floor of units/n, the last piece ends at the
// extent's end. NICs whose share is empty get no piece (the zero-length rule).
void split_by_bytes(const Extent& e, std::uint32_t nics, std::uint32_t mtu, std::vector<WritePiece>& out) {
  const std::uint64_t units = (e.length + mtu - 1) / mtu;
  std::uint64_t done = 0;
  for (std::uint32_t k = 0; k < nics && done < e.length; ++k) {
    const std::uint64_t share = units / nics + (k < units % nics ? 1 : 0);
    const std::uint64_t len = std::min(share * mtu, e.length - done);
    if (len == 0) continue;
    out.push_back({k, e.receiver, e.index, e.src_offset + done, e.dst_offset + done, len});
    done += len;
  }
  RAILCHECK_ASSERT(done == e.length, "the NICs' shares of an extent cover it exactly");
}

std::uint32_t whole_extent_nic(const Extent& e, const ShardRule& rule) {
  switch (rule.by) {
    case ShardBy::Pages: return e.index % rule.nics;
    case ShardBy::Receivers: return e.receiver % rule.nics;
    case ShardBy::Pinned:
    case ShardBy::Bytes: break;
  }
  RAILCHECK_ASSERT(rule.pinned_nic < rule.nics, "shard_write checked the pinned NIC");
  return rule.pinned_nic;
}

// Cuts every piece longer than `max` into consecutive pieces on the same NIC.
std::vector<WritePiece> cap_length(std::vector<WritePiece> pieces, std::uint64_t max) {
  if (max == 0) return pieces;
  std::vector<WritePiece> out;
  for (const WritePiece& p : pieces) {
    RAILCHECK_ASSERT(p.length > 0, "no piece is empty (the zero-length rule)");
    for (std::uint64_t at = 0; at < p.length; at += max)
      out.push_back({p.nic, p.receiver, p.extent, p.src_offset + at, p.dst_offset + at, std::min(max, p.length - at)});
  }
  RAILCHECK_ASSERT(out.size() >= pieces.size(), "capping the length only cuts pieces, never drops one");
  return out;
}

}  // namespace

Result<std::vector<WritePiece>> shard_write(const WriteShape& shape, const Regions& regions, const ShardRule& rule) {
  if (rule.nics == 0 || rule.mtu == 0)
    return Error{fmt::format("shard rule: {} NICs, MTU {}", rule.nics, rule.mtu), "both must be positive"};
  if (rule.by == ShardBy::Pinned && rule.pinned_nic >= rule.nics)
    return Error{fmt::format("shard rule: pinned NIC {} but the GPU has {} NICs", rule.pinned_nic, rule.nics), ""};
  std::vector<WritePiece> out;
  for (const Extent& e : extents_of(shape)) {
    if (auto err = check_extent(e, regions)) return *err;
    if (e.length == 0) continue;
    if (rule.by == ShardBy::Bytes)
      split_by_bytes(e, rule.nics, rule.mtu, out);
    else
      out.push_back({whole_extent_nic(e, rule), e.receiver, e.index, e.src_offset, e.dst_offset, e.length});
    RAILCHECK_ASSERT(out.back().nic < rule.nics && out.back().extent == e.index,
                     "every piece goes to one of the GPU's NICs and names its extent");
  }
  if (out.empty())
    return Error{"write of 0 bytes: no piece would carry the immediate", "do not post an empty transfer"};
  return cap_length(std::move(out), rule.max_piece_bytes);
}

std::uint32_t pieces_for(const std::vector<WritePiece>& pieces, std::uint32_t receiver) {
  return static_cast<std::uint32_t>(
      std::count_if(pieces.begin(), pieces.end(), [receiver](const WritePiece& p) { return p.receiver == receiver; }));
}

}  // namespace railcheck::imm
