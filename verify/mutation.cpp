#include "verify/mutation.hpp"

#include <algorithm>
#include <array>
#include <utility>

namespace railcheck::verify {
namespace {

constexpr std::array<std::pair<Mutation, std::string_view>, 10> kNames = {{
    {Mutation::None, "none"},
    {Mutation::ReadyBeforeRts, "ready-before-rts"},
    {Mutation::ReplaySwapped, "replay-swapped"},
    {Mutation::ReplayDropsFirst, "replay-drops-first"},
    {Mutation::ReplayForgetsRecv, "replay-forgets-recv"},
    {Mutation::SwallowFailure, "swallow-failure"},
    {Mutation::SkipLazyMr, "skip-lazy-mr"},
    {Mutation::NoStandbyOffer, "no-standby-offer"},
    {Mutation::DoubleComplete, "double-complete"},
    {Mutation::DropRttAdaptation, "drop-rtt-adaptation"},
}};

bool is_replay_batch(const Actions& batch) {
  return std::any_of(batch.begin(), batch.end(), [](const Action& a) {
    const auto* t = std::get_if<Trace>(&a);
    return t != nullptr && t->note.kind == TraceKind::Replayed;
  });
}

std::vector<std::size_t> post_send_positions(const Actions& batch) {
  std::vector<std::size_t> at;
  for (std::size_t i = 0; i < batch.size(); ++i)
    if (std::holds_alternative<PostSend>(batch[i])) at.push_back(i);
  return at;
}

}  // namespace

std::string_view to_string(Mutation m) {
  for (const auto& [k, name] : kNames)
    if (k == m) return name;
  return "?";
}

std::optional<Mutation> parse_mutation(std::string_view s) {
  for (const auto& [k, name] : kNames)
    if (name == s) return k;
  return std::nullopt;
}

std::string_view mutation_names() {
  return "none, ready-before-rts, replay-swapped, replay-drops-first, replay-forgets-recv, swallow-failure, "
         "skip-lazy-mr, no-standby-offer, double-complete, drop-rtt-adaptation";
}

void apply_mutation(Mutation m, Actions& batch) {
  switch (m) {
    case Mutation::None:
    case Mutation::DropRttAdaptation: return;  // a detector setting, not a rewrite of actions
    case Mutation::ReadyBeforeRts: {
      auto it = std::find_if(batch.begin(), batch.end(),
                             [](const Action& a) { return std::holds_alternative<ConnectionReady>(a); });
      if (it != batch.end()) std::rotate(batch.begin(), it, it + 1);
      return;
    }
    case Mutation::ReplaySwapped: {
      if (!is_replay_batch(batch)) return;
      const auto at = post_send_positions(batch);
      if (at.size() >= 2) std::swap(batch[at[0]], batch[at[1]]);
      return;
    }
    case Mutation::ReplayDropsFirst: {
      if (!is_replay_batch(batch)) return;
      const auto at = post_send_positions(batch);
      if (!at.empty()) batch.erase(batch.begin() + static_cast<std::ptrdiff_t>(at[0]));
      return;
    }
    case Mutation::ReplayForgetsRecv: {
      if (!is_replay_batch(batch)) return;
      auto it =
          std::find_if(batch.begin(), batch.end(), [](const Action& a) { return std::holds_alternative<PostRecv>(a); });
      if (it != batch.end()) batch.erase(it);
      return;
    }
    case Mutation::SwallowFailure:
      std::erase_if(batch, [](const Action& a) {
        if (std::holds_alternative<ConnectionFailed>(a)) return true;
        const auto* r = std::get_if<CompleteRequest>(&a);
        return r != nullptr && r->outcome == RequestOutcome::Failed;
      });
      return;
    case Mutation::SkipLazyMr:
      std::erase_if(batch, [](const Action& a) {
        const auto* r = std::get_if<RegisterMr>(&a);
        return r != nullptr && r->pd.value != 0;
      });
      return;
    case Mutation::NoStandbyOffer:
      std::erase_if(batch, [](const Action& a) {
        const auto* s = std::get_if<SendControl>(&a);
        return s != nullptr && std::holds_alternative<StandbyParams>(s->message);
      });
      return;
    case Mutation::DoubleComplete: {
      Actions doubled;
      for (const Action& a : batch) {
        doubled.push_back(a);
        const auto* r = std::get_if<CompleteRequest>(&a);
        if (r != nullptr && r->outcome == RequestOutcome::Done) doubled.push_back(a);
      }
      batch = std::move(doubled);
      return;
    }
  }
}

}  // namespace railcheck::verify
