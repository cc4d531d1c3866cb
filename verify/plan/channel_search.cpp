// The channel-agreement world, step by step (channel_search.hpp).
#include "verify/plan/channel_search.hpp"

#include <fmt/format.h>

#include <array>

#include "verify/plan/plan_models.hpp"

namespace railcheck::plan {

std::string to_string(const ChannelStep& s) {
  using K = ChannelStep::Kind;
  switch (s.kind) {
    case K::Ranks: return fmt::format("ranks {}", s.value);
    case K::FifoDepth: return fmt::format("fifo-depth {}", s.value);
    case K::Transfer:
      return s.value == 0 ? fmt::format("pair {}->{} none", s.a, s.b)
                          : fmt::format("pair {}->{} {}", s.a, s.b, s.value);
    case K::Collectives: return fmt::format("collectives {}", s.value);
    case K::CollChannels: return fmt::format("collective {} channels {}", s.a, s.value);
    case K::P2pDone: return fmt::format("rank {} p2p {} before group end", s.a, s.value != 0 ? "done" : "not done");
  }
  return "?";
}

Result<ChannelAgreementWorld> ChannelAgreementWorld::make(const ChannelModel& m) {
  auto policy = policy_by_name(m.policy);
  if (!policy) return policy.error();
  return ChannelAgreementWorld(std::make_shared<const Setup>(Setup{policy.value(), m.bound}));
}

std::optional<ChannelStep::Kind> ChannelAgreementWorld::next_kind() const {
  using K = ChannelStep::Kind;
  if (ranks_ == 0) return K::Ranks;
  if (fifo_depth_ == 0) return K::FifoDepth;
  if (pairs_decided_ < ranks_ * ranks_) return K::Transfer;
  if (colls_ == 0) return K::Collectives;
  if (coll_channels_.size() < colls_) return K::CollChannels;
  if (setup_->policy.p2p_pre_scheduled && done_decided_ < ranks_) return K::P2pDone;
  return std::nullopt;
}

std::vector<ChannelStep> ChannelAgreementWorld::choices() const {
  using K = ChannelStep::Kind;
  std::vector<ChannelStep> out;
  const auto kind = next_kind();
  if (!kind) return out;
  const ChannelWorldBound& b = setup_->bound;
  switch (*kind) {
    case K::Ranks:
      for (std::uint32_t n = b.min_ranks; n <= b.max_ranks; ++n) out.push_back({K::Ranks, 0, 0, n});
      break;
    case K::FifoDepth:
      for (const auto d : b.work_fifo_depths) out.push_back({K::FifoDepth, 0, 0, d});
      break;
    case K::Transfer: {
      const std::uint32_t from = pairs_decided_ / ranks_, to = pairs_decided_ % ranks_;
      out.push_back({K::Transfer, from, to, 0});
      for (const auto bytes : b.transfer_bytes) out.push_back({K::Transfer, from, to, bytes});
      break;
    }
    case K::Collectives:
      for (std::uint32_t n = 1; n <= b.max_colls; ++n) out.push_back({K::Collectives, 0, 0, n});
      break;
    case K::CollChannels:
      for (const auto c : b.coll_channel_counts)
        out.push_back({K::CollChannels, static_cast<std::uint32_t>(coll_channels_.size()), 0, c});
      break;
    case K::P2pDone:
      for (std::uint64_t done = 0; done < 2; ++done) out.push_back({K::P2pDone, done_decided_, 0, done});
      break;
  }
  return out;
}

void ChannelAgreementWorld::apply(const ChannelStep& s) {
  using K = ChannelStep::Kind;
  hash_.add(s.kind);
  hash_.add(s.a);
  hash_.add(s.b);
  hash_.add(s.value);
  switch (s.kind) {
    case K::Ranks: ranks_ = static_cast<std::uint32_t>(s.value); break;
    case K::FifoDepth: fifo_depth_ = static_cast<std::uint32_t>(s.value); break;
    case K::Transfer:
      ++pairs_decided_;
      if (s.value != 0) transfers_.push_back({s.a, s.b, s.value});
      break;
    case K::Collectives: colls_ = static_cast<std::uint32_t>(s.value); break;
    case K::CollChannels: coll_channels_.push_back(static_cast<std::uint32_t>(s.value)); break;
    case K::P2pDone:
      if (s.value != 0) done_mask_ |= 1U << s.a;
      ++done_decided_;
      break;
  }
  if (!next_kind() && !evaluated_) {
    evaluated_ = true;
    verdict_ = check_world(setup_->policy, input(), static_cast<std::uint32_t>(transfers_.size() + colls_));
  }
}

SchedInput ChannelAgreementWorld::input() const {
  CommShape shape = setup_->bound.shape;
  shape.nranks = ranks_ == 0 ? setup_->bound.min_ranks : ranks_;
  if (fifo_depth_ != 0) shape.work_fifo_depth = fifo_depth_;
  return world_input(shape, transfers_, coll_channels_, done_mask_);
}

std::string ChannelAgreementWorld::sched_trace() const { return to_trace(input()); }

namespace {

using World = ChannelAgreementWorld;

// One invariant per verdict of check_world; each speaks only at the end, when the world was
// scheduled.
verify::Invariant<World> verdict_is_not(std::string name, std::string verdict, std::string description) {
  return {std::move(name), std::move(description),
          [verdict = std::move(verdict)](const World& w, bool) -> std::optional<std::string> {
            if (w.verdict() && w.verdict()->invariant == verdict) return w.verdict()->explanation;
            return std::nullopt;
          }};
}

}  // namespace

std::span<const verify::Invariant<World>> channel_invariants() {
  static const std::array<verify::Invariant<World>, 4> kAll = {
      verdict_is_not("channel-agreement", "agreement", "every rank puts every collective on the same channels"),
      verdict_is_not("plans-complete", "progress",
                     "the ranks' plans, executed against each other, all finish (no wait-for cycle)"),
      verdict_is_not("plan-lifecycle", "lifecycle", "every plan is reclaimed exactly once and never used after"),
      verdict_is_not("schedulable", "input", "every communicator of the bound is one the scheduler accepts"),
  };
  return kAll;
}

}  // namespace railcheck::plan
