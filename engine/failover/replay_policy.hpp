#pragma once
// Which work requests are re-posted on the new path after a failover.
#include <optional>
#include <string_view>

namespace railcheck {

enum class ReplayPolicy : unsigned char {
  // The seed's rule (§16.1): replay every WR that has no success completion. Delivers a message
  // twice when the receiver got it but the ACK was lost before the link died.
  Naive,
  // NCCL 2.29+/2.30 IB resiliency: after a probe delay, read the receiver's per-message
  // completion record over a healthy path and retransmit only what did not land.
  Probe,
  // Ours: the receiver fences the failed path, then reports its delivered watermark; the
  // sender replays beyond it and the receiver drops any sequence number it has already seen.
  Resync,
};

std::string_view to_string(ReplayPolicy p);
std::optional<ReplayPolicy> parse_replay_policy(std::string_view s);

}  // namespace railcheck
