#include "verify/zerobuf/flag_world.hpp"

#include <fmt/format.h>

#include <array>
#include <cassert>

#include "engine/core/state_hash.hpp"

namespace railcheck::verify::zerobuf {

using namespace railcheck::zerobuf;

namespace {

constexpr std::array<std::pair<FlagMutation, std::string_view>, 8> kFlagMutations = {{
    {FlagMutation::None, "none"},
    {FlagMutation::BooleanFlags, "boolean-flags"},
    {FlagMutation::WriteBeforeReady, "write-before-ready"},
    {FlagMutation::ReadBeforePosted, "read-before-posted"},
    {FlagMutation::SkipReadDoneWait, "skip-readdone-wait"},
    {FlagMutation::FlagBeforeData, "flag-before-data"},
    {FlagMutation::NoTimeout, "no-timeout"},
    {FlagMutation::TimeoutSkips, "timeout-skips"},
}};

// Each rank's buffers, at different places in each window (offsets are not symmetric): input at
// kIn + 0x40 r, output at kOut + 0x40 r, one 4-byte word per part.
constexpr std::uint64_t kIn = 0x1000, kOut = 0x2000, kStride = 0x40;
constexpr Nanos kTimeout = sec(5);  // nominal: the world fires timeouts itself, when all are stuck

bool skipped_by(FlagMutation m, FlagKind k) {
  return (m == FlagMutation::WriteBeforeReady && k == FlagKind::Ready) ||
         (m == FlagMutation::ReadBeforePosted && k == FlagKind::Posted) ||
         (m == FlagMutation::SkipReadDoneWait && k == FlagKind::ReadDone);
}

}  // namespace

std::string_view to_string(FlagMutation m) {
  for (const auto& [k, name] : kFlagMutations)
    if (k == m) return name;
  return "?";
}

std::optional<FlagMutation> parse_flag_mutation(std::string_view s) {
  for (const auto& [k, name] : kFlagMutations)
    if (name == s) return k;
  return std::nullopt;
}

std::string_view flag_mutation_names() {
  return "none, boolean-flags, write-before-ready, read-before-posted, skip-readdone-wait, flag-before-data, "
         "no-timeout, timeout-skips";
}

std::string describe(const FlagModel& m) {
  std::string ops;
  for (const auto k : m.ops) ops += (ops.empty() ? "" : ", ") + std::string(to_string(k));
  return fmt::format("{} ranks, {} calls of [{}]{}, {} dead rank(s){}", m.ranks, m.iterations, ops,
                     m.in_place ? " (all-reduce in place)" : "", m.dead_ranks,
                     m.mutation == FlagMutation::None ? "" : fmt::format(", mutation {}", to_string(m.mutation)));
}

std::string to_string(const FlagChoice& c) {
  switch (c.kind) {
    case FlagChoice::Kind::Step: return fmt::format("step r{}", c.rank);
    case FlagChoice::Kind::Between: return fmt::format("between r{}", c.rank);
    case FlagChoice::Kind::Kill: return fmt::format("kill r{}", c.rank);
    case FlagChoice::Kind::Timeout: return fmt::format("timeout r{}", c.rank);
  }
  return "?";
}

std::optional<FlagChoice> parse_flag_choice(std::string_view s) {
  for (const auto kind :
       {FlagChoice::Kind::Step, FlagChoice::Kind::Between, FlagChoice::Kind::Kill, FlagChoice::Kind::Timeout})
    for (std::uint32_t r = 0; r < FlagWorld::kMaxRanks; ++r)
      if (to_string(FlagChoice{kind, r}) == s) return FlagChoice{kind, r};
  return std::nullopt;
}

FlagWorld::FlagWorld(const FlagModel& m) : m_(m) {
  for (std::uint32_t r = 0; r < m.ranks; ++r) {
    Rank k{RankRunner(r, m.ranks, kTimeout)};
    k.flags.assign(kFlagKinds * m.ranks, Slot{});
    k.words.assign(2 * m.ranks, 0);
    ranks_.push_back(std::move(k));
  }
}

CollCall FlagWorld::call_of(std::uint32_t r, std::uint32_t iteration) const {
  const std::uint32_t n = m_.ranks;
  CollCall c;
  c.kind = m_.ops[iteration % m_.ops.size()];
  c.input_offset = kIn + kStride * r;
  c.output_offset = (c.kind == CollKind::AllReduce && m_.in_place) ? c.input_offset : kOut + kStride * r;
  c.bytes = c.kind == CollKind::AllReduce ? 4 * n : 4;
  if (c.kind == CollKind::Dispatch || c.kind == CollKind::Combine) {
    for (std::uint32_t p = 0; p < n; ++p) {
      c.send_bytes.push_back(4);
      c.send_displ.push_back(4 * p);
      c.recv_bytes.push_back(4);
      c.recv_displ.push_back(4 * p);
    }
  }
  return c;
}

std::optional<std::size_t> FlagWorld::word_of(std::uint32_t r, std::uint64_t offset) const {
  const std::uint64_t in = kIn + kStride * r, out = kOut + kStride * r, n = m_.ranks;
  if (offset % 4 != 0) return std::nullopt;
  if (offset >= in && offset < in + 4 * n) return (offset - in) / 4;
  if (offset >= out && offset < out + 4 * n) return n + (offset - out) / 4;
  return std::nullopt;
}

std::uint64_t FlagWorld::observed(std::uint32_t r, const FlagStep& s) const {
  if (skipped_by(m_.mutation, s.flag)) return s.epoch;  // the wait is not done at all
  const Slot& slot = ranks_[r].flags[static_cast<std::size_t>(s.flag) * m_.ranks + s.peer];
  if (m_.mutation == FlagMutation::BooleanFlags) return slot.value != 0 ? s.epoch : 0;
  return slot.value;
}

bool FlagWorld::can_step(std::uint32_t r) const {
  const Rank& k = ranks_[r];
  switch (k.phase) {
    case RankPhase::Before:
    case RankPhase::After: return true;
    case RankPhase::InCall: {
      if (k.runner.state() != RunnerState::Running) return false;
      const FlagStep& s = k.runner.step();
      return s.kind != StepKind::Wait || flag_satisfies(observed(r, s), s.epoch);
    }
    default: return false;
  }
}

bool FlagWorld::all_stuck() const {
  for (std::uint32_t r = 0; r < m_.ranks; ++r)
    if (can_step(r)) return false;
  return true;
}

std::vector<FlagChoice> FlagWorld::choices() const {
  std::vector<FlagChoice> out;
  for (std::uint32_t r = 0; r < m_.ranks; ++r)
    if (can_step(r))
      out.push_back(
          FlagChoice{ranks_[r].phase == RankPhase::InCall ? FlagChoice::Kind::Step : FlagChoice::Kind::Between, r});
  if (deaths_ < m_.dead_ranks)
    for (std::uint32_t r = 0; r < m_.ranks; ++r)
      if (ranks_[r].phase != RankPhase::Finished && ranks_[r].phase != RankPhase::Dead &&
          ranks_[r].runner.state() != RunnerState::Failed)
        out.push_back(FlagChoice{FlagChoice::Kind::Kill, r});
  if (out.empty() && m_.mutation != FlagMutation::NoTimeout)
    for (std::uint32_t r = 0; r < m_.ranks; ++r)
      if (ranks_[r].phase == RankPhase::InCall && ranks_[r].runner.state() == RunnerState::Running)
        out.push_back(FlagChoice{FlagChoice::Kind::Timeout, r});
  return out;
}

void FlagWorld::flag(std::string invariant, std::string message) {
  if (!bad_access(invariant)) bad_.emplace_back(std::move(invariant), std::move(message));
}

std::optional<std::string> FlagWorld::bad_access(std::string_view invariant) const {
  for (const auto& [name, message] : bad_)
    if (name == invariant) return message;
  return std::nullopt;
}

void FlagWorld::between(std::uint32_t r) {
  Rank& k = ranks_[r];
  const std::uint32_t n = m_.ranks;
  if (k.phase == RankPhase::After) {
    // The application consumes this call's output.
    const CollCall c = call_of(r, k.iteration);
    const std::uint64_t words = c.kind == CollKind::ReduceScatter ? 1 : n;
    for (std::uint64_t i = 0; i < words; ++i) {
      const std::size_t w = *word_of(r, c.output_offset + 4 * i);
      if (k.words[w] != k.iteration + 1)
        flag("no-read-before-written",
             fmt::format("rank {} consumed its {} output of call {} while word {} still held call {}'s data", r,
                         to_string(c.kind), k.iteration, i, static_cast<int>(k.words[w]) - 1));
    }
    ++k.consumed;
    ++k.iteration;
    if (k.iteration == m_.iterations) {
      k.phase = RankPhase::Finished;
      return;
    }
  }
  // The application writes the next call's input, then calls the collective.
  const CollCall c = call_of(r, k.iteration);
  const std::uint64_t words = c.kind == CollKind::AllGather ? 1 : n;
  for (std::uint64_t i = 0; i < words; ++i)
    k.words[*word_of(r, c.input_offset + 4 * i)] = static_cast<std::uint8_t>(k.iteration + 1);
  auto started = k.runner.start(c, Nanos{0});
  assert(started.ok());
  (void)started;
  k.phase = k.runner.state() == RunnerState::Running ? RankPhase::InCall : RankPhase::After;
}

void FlagWorld::copy_words(std::uint32_t from, std::uint64_t src, std::uint32_t to, std::uint64_t dst,
                           std::uint64_t bytes, bool remote_read, bool sum, std::uint32_t actor) {
  const Rank& a = ranks_[actor];
  const std::uint8_t want = static_cast<std::uint8_t>(a.iteration + 1);
  for (std::uint64_t i = 0; i < bytes / 4; ++i) {
    const auto sw = word_of(from, src + 4 * i), dw = word_of(to, dst + 4 * i);
    if (!sw || !dw) {
      // An offset taken from a flag that was never posted: a read of unknown data, or a write
      // over memory nobody handed out.
      flag(remote_read ? "no-read-before-written" : "no-overwrite-before-readers-done",
           fmt::format("rank {} copied {:#x} of rank {} to {:#x} of rank {}: not a buffer of this call (a flag "
                       "offset that was never published)",
                       actor, src + 4 * i, from, dst + 4 * i, to));
      return;
    }
    const std::uint8_t v = ranks_[from].words[*sw];
    if (remote_read && v < want)
      flag("no-read-before-written", fmt::format("rank {} read rank {}'s input for call {} before rank {} wrote it "
                                                 "(it held call {}'s data)",
                                                 actor, from, a.iteration, from, static_cast<int>(v) - 1));
    if (remote_read && v > want)
      flag("no-overwrite-before-readers-done",
           fmt::format("rank {} overwrote its input with call {}'s data before rank {} had read it for call {}", from,
                       static_cast<int>(v) - 1, actor, a.iteration));
    if (to != actor && ranks_[to].consumed < a.iteration)
      flag("no-overwrite-before-readers-done",
           fmt::format("rank {} wrote rank {}'s output for call {} before rank {} had consumed call {}'s", actor, to,
                       a.iteration, to, a.iteration - 1));
    if (!sum) ranks_[to].words[*dw] = v;
  }
}

void FlagWorld::run_step(std::uint32_t r) {
  Rank& k = ranks_[r];
  const FlagStep s = k.runner.step();
  const std::uint32_t n = m_.ranks;
  auto slot_at = [&](std::uint32_t owner, FlagKind f, std::uint32_t from) -> Slot& {
    return ranks_[owner].flags[static_cast<std::size_t>(f) * n + from];
  };
  switch (s.kind) {
    case StepKind::Post:
      if (k.posted_early && s.flag == FlagKind::Written) {
        k.posted_early = false;  // FlagBeforeData: already posted before the write
      } else {
        slot_at(s.peer, s.flag, r) =
            Slot{m_.mutation == FlagMutation::BooleanFlags ? 1 : s.epoch, s.post_offset, s.epoch};
      }
      break;
    case StepKind::Wait: {
      const Slot& slot = slot_at(r, s.flag, s.peer);
      if (!skipped_by(m_.mutation, s.flag) && slot.true_epoch != s.epoch)
        flag("no-flag-aba", fmt::format("rank {} accepted rank {}'s {} flag posted for epoch {} while waiting for "
                                        "epoch {}",
                                        r, s.peer, to_string(s.flag), slot.true_epoch, s.epoch));
      const bool taken = k.runner.offer(observed(r, s), Nanos{0});
      assert(taken);
      (void)taken;
      break;
    }
    case StepKind::Write:
      if (m_.mutation == FlagMutation::FlagBeforeData && !k.posted_early) {
        slot_at(s.peer, FlagKind::Written, r) = Slot{s.epoch, 0, s.epoch};
        k.posted_early = true;
        return;  // the write itself is the rank's next step
      }
      copy_words(r, s.local_offset, s.peer, slot_at(r, FlagKind::Ready, s.peer).offset + s.remote_add, s.bytes, false,
                 false, r);
      break;
    case StepKind::Read:
      copy_words(s.peer, slot_at(r, FlagKind::Posted, s.peer).offset + s.remote_add, r, s.local_offset, s.bytes, true,
                 s.reduce == Reduce::SumF32, r);
      break;
    case StepKind::Local: copy_words(r, s.src_offset, r, s.local_offset, s.bytes, false, false, r); break;
  }
  if (s.kind != StepKind::Wait) k.runner.step_done();
  if (k.runner.state() == RunnerState::Idle) k.phase = RankPhase::After;
}

void FlagWorld::apply(const FlagChoice& c) {
  Rank& k = ranks_[c.rank];
  switch (c.kind) {
    case FlagChoice::Kind::Step: run_step(c.rank); break;
    case FlagChoice::Kind::Between: between(c.rank); break;
    case FlagChoice::Kind::Kill:
      k.phase = RankPhase::Dead;
      ++deaths_;
      break;
    case FlagChoice::Kind::Timeout: {
      const FlagStep s = k.runner.step();
      if (m_.mutation == FlagMutation::TimeoutSkips) {
        k.skipped_wait = true;
        (void)k.runner.offer(s.epoch, Nanos{0});
        if (k.runner.state() == RunnerState::Idle) k.phase = RankPhase::After;
      } else {
        k.runner.time_out(ranks_[c.rank].flags[static_cast<std::size_t>(s.flag) * m_.ranks + s.peer].value, kTimeout);
      }
      break;
    }
  }
}

std::string FlagWorld::describe_choice(const FlagChoice& c) const {
  const Rank& k = ranks_[c.rank];
  switch (c.kind) {
    case FlagChoice::Kind::Step:
      return fmt::format("r{} call {} step {}: {}", c.rank, k.iteration, k.runner.pc() + 1, describe(k.runner.step()));
    case FlagChoice::Kind::Between: {
      std::string what = k.phase == RankPhase::After ? fmt::format("consumes call {}'s output", k.iteration) : "";
      const std::uint32_t next = k.phase == RankPhase::After ? k.iteration + 1 : k.iteration;
      if (next < m_.iterations)
        what += fmt::format("{}writes input, starts call {} ({})", what.empty() ? "" : "; ", next,
                            to_string(m_.ops[next % m_.ops.size()]));
      return fmt::format("r{} {}", c.rank, what);
    }
    case FlagChoice::Kind::Kill: return fmt::format("r{} dies", c.rank);
    case FlagChoice::Kind::Timeout: return fmt::format("r{} times out on {}", c.rank, describe(k.runner.step()));
  }
  return "?";
}

bool FlagWorld::failed_without_death() const {
  if (deaths_ > 0) return false;
  for (const auto& k : ranks_)
    if (k.runner.state() == RunnerState::Failed) return true;
  return false;
}

std::uint64_t FlagWorld::fingerprint() const {
  StateHasher h;
  h.add(static_cast<std::uint64_t>(deaths_));
  for (const auto& k : ranks_) {
    h.add(k.phase);
    h.add(static_cast<std::uint64_t>(k.iteration));
    h.add(k.runner.state());
    h.add(static_cast<std::uint64_t>(k.runner.pc()));
    h.add(k.posted_early);
    h.add(k.skipped_wait);
    h.add(static_cast<std::uint64_t>(k.consumed));
    for (const auto& s : k.flags) {
      h.add(s.value);
      h.add(s.offset);
      h.add(s.true_epoch);
    }
    for (const auto w : k.words) h.add(static_cast<std::uint64_t>(w));
  }
  h.add(static_cast<std::uint64_t>(bad_.size()));
  return h.value();
}

}  // namespace railcheck::verify::zerobuf
