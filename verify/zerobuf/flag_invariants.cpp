#include "verify/zerobuf/flag_invariants.hpp"

#include <fmt/format.h>

namespace railcheck::verify::zerobuf {
namespace {

using railcheck::zerobuf::RunnerState;

// An access the world saw and recorded under this invariant's name.
Invariant<FlagWorld> recorded_flag_violation(std::string name, std::string description) {
  return Invariant<FlagWorld>{
      name, std::move(description),
      [name](const FlagWorld& w, bool) -> std::optional<std::string> { return w.bad_access(name); }};
}

bool failed(const FlagWorld::Rank& k) { return k.runner.state() == RunnerState::Failed; }

// The peer a failed rank was waiting for.
std::uint32_t waited_for(const FlagWorld::Rank& k) { return k.runner.program()[k.runner.pc()].peer; }

}  // namespace

const std::vector<Invariant<FlagWorld>>& flag_invariants() {
  static const std::vector<Invariant<FlagWorld>> all = {
      recorded_flag_violation("no-read-before-written",
                              "a peer's input is read, and an output consumed, only once it holds this call's data"),
      recorded_flag_violation(
          "no-overwrite-before-readers-done",
          "no buffer is overwritten while someone still has to read it (a peer's pending read of an input, "
          "an output not yet consumed)"),
      recorded_flag_violation("no-flag-aba", "a wait accepts only a flag posted for the epoch it waits for"),
      {"no-deadlock", "at the end every rank has finished, died or failed; with no death, every rank finished",
       [](const FlagWorld& w, bool at_end) -> std::optional<std::string> {
         if (!at_end) return std::nullopt;
         for (std::uint32_t r = 0; r < w.ranks().size(); ++r) {
           const auto& k = w.ranks()[r];
           if (k.phase == RankPhase::InCall && !failed(k))
             return fmt::format("rank {} waits forever at {} (no step left anywhere)", r,
                                railcheck::zerobuf::describe(k.runner.step()));
         }
         if (w.failed_without_death())
           for (std::uint32_t r = 0; r < w.ranks().size(); ++r)
             if (failed(w.ranks()[r]))
               return fmt::format("rank {} failed though every rank is alive: {}", r,
                                  w.ranks()[r].runner.error()->what);
         return std::nullopt;
       }},
      {"dead-peer-is-error",
       "with a dead rank, every other rank ends having finished every call correctly, or failed with a timeout "
       "naming a peer that is dead or failed",
       [](const FlagWorld& w, bool at_end) -> std::optional<std::string> {
         if (!at_end || w.deaths() == 0) return std::nullopt;
         for (std::uint32_t r = 0; r < w.ranks().size(); ++r) {
           const auto& k = w.ranks()[r];
           if (k.phase == RankPhase::Dead) continue;
           if (k.skipped_wait)
             return fmt::format("rank {} went past a wait its dead peer never satisfied, without an error", r);
           if (k.phase == RankPhase::Finished) continue;
           if (!failed(k)) return fmt::format("rank {} neither finished nor failed", r);
           const auto& peer = w.ranks()[waited_for(k)];
           if (peer.phase != RankPhase::Dead && !failed(peer))
             return fmt::format("rank {} failed waiting for rank {}, which is alive and well: {}", r, waited_for(k),
                                k.runner.error()->what);
         }
         return std::nullopt;
       }},
  };
  return all;
}

}  // namespace railcheck::verify::zerobuf
