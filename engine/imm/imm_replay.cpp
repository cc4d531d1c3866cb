#include "engine/imm/imm_replay.hpp"

namespace railcheck::imm {

const char* to_string(WriteFate f) {
  switch (f) {
    case WriteFate::Acked: return "acked";
    case WriteFate::AckLost: return "ack-lost";
    case WriteFate::Lost: return "lost";
    case WriteFate::LateOnDeadPath: return "late";
  }
  return "?";
}

std::vector<std::uint32_t> writes_to_replay(ReplayPolicy policy, std::span<const WriteFate> fates) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t i = 0; i < fates.size(); ++i) {
    const WriteFate f = fates[i];
    // Naive knows only completions; Probe and Resync know what had landed when they asked.
    const bool replay =
        policy == ReplayPolicy::Naive ? f != WriteFate::Acked : f == WriteFate::Lost || f == WriteFate::LateOnDeadPath;
    if (replay) out.push_back(i);
  }
  return out;
}

bool DuplicateFilter::admit(std::uint32_t seq) {
  if (policy_ != ReplayPolicy::Resync) return true;
  if (seen_.at(seq)) return false;
  seen_[seq] = true;
  return true;
}

}  // namespace railcheck::imm
