#include "verify/zerobuf/direct_world.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cassert>

#include "engine/core/state_hash.hpp"
#include "engine/zerobuf/flag_step.hpp"

namespace railcheck::verify::zerobuf {

using namespace railcheck::zerobuf;

namespace {

constexpr std::array<std::pair<DirectMutation, std::string_view>, 5> kDirectMutations = {{
    {DirectMutation::None, "none"},
    {DirectMutation::NoEndBarrier, "no-end-barrier"},
    {DirectMutation::StartWithoutOffsets, "start-without-offsets"},
    {DirectMutation::SharedSlotNoGe, "shared-slot-no-ge"},
    {DirectMutation::TimeoutSkips, "timeout-skips"},
}};

// Each rank's buffers sit at other offsets of its window (offsets are not symmetric): buffer set
// s of rank r has its input at kBase + r x kRankStride + s x kSetUnits units and its output
// kBufferUnits units further.
constexpr std::uint64_t kUnit = railcheck::zerobuf::kDirectUnitBytes;  // shorthand in this file only
constexpr std::uint64_t kBase = 0x10000, kRankStride = 0x300;
constexpr std::uint32_t kBufferUnits = 16, kSetUnits = 2 * kBufferUnits;

std::uint64_t base_of(std::uint32_t r) { return kBase + r * kRankStride; }

}  // namespace

std::string_view to_string(DirectMutation m) {
  for (const auto& [k, name] : kDirectMutations)
    if (k == m) return name;
  return "?";
}

std::optional<DirectMutation> parse_direct_mutation(std::string_view s) {
  for (const auto& [k, name] : kDirectMutations)
    if (name == s) return k;
  return std::nullopt;
}

std::string_view direct_mutation_names() {
  return "none, no-end-barrier, start-without-offsets, shared-slot-no-ge, timeout-skips";
}

std::string describe(const DirectModel& m) {
  std::string ops;
  for (const auto k : m.ops) ops += (ops.empty() ? "" : ", ") + std::string(to_string(k));
  return fmt::format(
      "{} ranks, {} direct calls of [{}]{}, {} x 16-byte units per piece, {} block(s), {} buffer set(s), {} dead "
      "rank(s){}",
      m.ranks, m.calls, ops, m.in_place ? " (all-reduce in place)" : "", m.units, m.blocks, m.buffers, m.dead_ranks,
      m.mutation == DirectMutation::None ? "" : fmt::format(", mutation {}", to_string(m.mutation)));
}

std::string to_string(const DirectChoice& c) {
  switch (c.kind) {
    case DirectChoice::Kind::Between: return fmt::format("between r{}", c.rank);
    case DirectChoice::Kind::Step: return fmt::format("step r{} b{}", c.rank, c.block);
    case DirectChoice::Kind::Kill: return fmt::format("kill r{}", c.rank);
    case DirectChoice::Kind::Timeout: return fmt::format("timeout r{}", c.rank);
  }
  return "?";
}

std::optional<DirectChoice> parse_direct_choice(std::string_view s) {
  using K = DirectChoice::Kind;
  for (const K kind : {K::Between, K::Step, K::Kill, K::Timeout})
    for (std::uint8_t r = 0; r < DirectWorld::kMaxRanks; ++r)
      for (std::uint8_t b = 0; b < DirectWorld::kMaxBlocks; ++b) {
        const DirectChoice c{kind, r, kind == K::Step ? b : std::uint8_t{0}};
        if (to_string(c) == s) return c;
      }
  return std::nullopt;
}

DirectWorld::DirectWorld(const DirectModel& m) : m_(m) {
  assert(m.ranks >= 2 && m.ranks <= kMaxRanks && m.blocks >= 1 && m.blocks <= kMaxBlocks && m.units >= 1 &&
         m.units <= kMaxUnits && m.buffers >= 1 && m.buffers <= kMaxBuffers);
  for (std::uint32_t r = 0; r < m.ranks; ++r) {
    Rank k;
    k.blocks.assign(m.blocks, Block{});
    k.slots.assign(static_cast<std::size_t>(m.blocks) * m.ranks, Slot{});
    k.memory.assign(static_cast<std::size_t>(m.buffers) * kSetUnits, Unit{});
    ranks_.push_back(std::move(k));
  }
}

std::uint64_t DirectWorld::input_offset(std::uint32_t r, std::uint32_t call) const {
  return base_of(r) + static_cast<std::uint64_t>(call % m_.buffers) * kSetUnits * kUnit;
}

std::uint64_t DirectWorld::output_offset(std::uint32_t r, std::uint32_t call) const {
  if (m_.in_place && op_of(call) == FastOp::AllReduce) return input_offset(r, call);
  return input_offset(r, call) + kBufferUnits * kUnit;
}

std::optional<std::size_t> DirectWorld::unit_at(std::uint32_t r, std::uint64_t offset) const {
  if (offset < base_of(r) || (offset - base_of(r)) % kUnit != 0) return std::nullopt;
  const std::uint64_t u = (offset - base_of(r)) / kUnit;
  if (u >= ranks_[r].memory.size()) return std::nullopt;
  return static_cast<std::size_t>(u);
}

bool DirectWorld::can_step(std::uint32_t r, std::uint32_t b) const {
  const Rank& k = ranks_[r];
  if (k.phase != FastPhase::InCall) return false;
  const Block& blk = k.blocks[b];
  if (blk.pc >= blk.program.size()) return false;
  const DirectStep& s = blk.program[blk.pc];
  if (s.kind != DirectStepKind::Wait) return true;
  const std::uint64_t seen = k.slots[b * m_.ranks + s.peer].epoch;
  return m_.mutation == DirectMutation::SharedSlotNoGe ? seen == s.epoch : flag_satisfies(seen, s.epoch);
}

std::vector<DirectChoice> DirectWorld::choices() const {
  std::vector<DirectChoice> out;
  using K = DirectChoice::Kind;
  for (std::uint8_t r = 0; r < m_.ranks; ++r) {
    const FastPhase ph = ranks_[r].phase;
    if (ph == FastPhase::Before || ph == FastPhase::After) out.push_back(DirectChoice{K::Between, r});
    for (std::uint8_t b = 0; b < m_.blocks; ++b)
      if (can_step(r, b)) out.push_back(DirectChoice{K::Step, r, b});
  }
  const bool stepped = !out.empty();
  if (deaths_ < m_.dead_ranks)
    for (std::uint8_t r = 0; r < m_.ranks; ++r) {
      const FastPhase ph = ranks_[r].phase;
      if (ph != FastPhase::Finished && ph != FastPhase::Dead && ph != FastPhase::Failed)
        out.push_back(DirectChoice{K::Kill, r});
    }
  // Timeouts are longer than any progress: they fire only when no block anywhere can step.
  if (!stepped)
    for (std::uint8_t r = 0; r < m_.ranks; ++r)
      if (ranks_[r].phase == FastPhase::InCall) out.push_back(DirectChoice{K::Timeout, r});
  return out;
}

void DirectWorld::between(std::uint32_t r) {
  Rank& k = ranks_[r];
  const std::uint32_t n = m_.ranks;
  if (k.phase == FastPhase::After) {
    // The application consumes the output.
    const FastOp op = op_of(k.call);
    std::vector<std::uint32_t> got;
    const std::size_t first = *unit_at(r, output_offset(r, k.call));
    for (std::uint32_t i = 0; i < output_words(op, m_.units, n); ++i) {
      const Unit& u = k.memory[first + i];
      if (u.call != k.call + 1)
        bad_.record(
            "no-read-before-written",
            fmt::format("rank {} consumed its {} output of call {} while unit {} still held {}", r, to_string(op),
                        k.call, i, u.call == 0 ? "nothing" : fmt::format("call {}'s data", u.call - 1)));
      got.push_back(u.value);
    }
    if (auto bad = output_mismatch(op, m_.units, r, n, k.call, got))
      bad_.record("direct-results-match-spec", "the application consumed " + *bad);
    ++k.consumed;
    if (++k.call == m_.calls) {
      k.phase = FastPhase::Finished;
      return;
    }
  }
  // The application writes the next input, then calls.
  const FastOp op = op_of(k.call);
  const std::size_t in = *unit_at(r, input_offset(r, k.call));
  for (std::uint32_t i = 0; i < input_words(op, m_.units, n); ++i)
    k.memory[in + i] = Unit{input_token(r, k.call, i), static_cast<std::uint8_t>(k.call + 1)};
  for (std::uint32_t b = 0; b < m_.blocks; ++b) {
    auto prog = build_direct_program(op, m_.units, r, n, b, m_.blocks, k.call);
    if (m_.mutation == DirectMutation::NoEndBarrier)
      std::erase_if(prog, [](const DirectStep& s) { return s.phase == DirectPhase::End; });
    k.blocks[b] = Block{std::move(prog), 0, 0};
  }
  k.phase = FastPhase::InCall;
}

// The index of unit `unit` of `owner`'s input (or output) as block b of rank r finds it: its own
// offsets, or the ones `owner` published in r's slot [b][owner].
std::optional<std::size_t> DirectWorld::peer_unit(std::uint32_t r, std::uint32_t b, std::uint32_t owner, bool input,
                                                  std::uint32_t unit, const char* what) {
  const Rank& k = ranks_[r];
  const Slot& slot = k.slots[b * m_.ranks + owner];
  const std::uint64_t base = owner == r ? (input ? input_offset(r, k.call) : output_offset(r, k.call))
                                        : (input ? slot.input_offset : slot.output_offset);
  const auto idx = unit_at(owner, base + unit * kUnit);
  if (!idx)
    bad_.record(input ? "no-read-before-written" : "no-overwrite-before-readers-done",
                fmt::format("rank {} {} rank {}'s {} at {:#x}: not a buffer (an offset never published)", r, what,
                            owner, input ? "input" : "output", base + unit * kUnit));
  return idx;
}

void DirectWorld::load(std::uint32_t r, std::uint32_t b, const DirectStep& s) {
  Rank& k = ranks_[r];
  const auto idx = peer_unit(r, b, s.peer, true, s.src, "read");
  const Unit u = idx ? ranks_[s.peer].memory[*idx] : Unit{};
  const std::uint8_t want = static_cast<std::uint8_t>(k.call + 1);
  if (idx && u.call < want)
    bad_.record("no-read-before-written",
                fmt::format("rank {} read unit {} of rank {}'s input for call {} while it held {}", r, s.src, s.peer,
                            k.call, u.call == 0 ? "nothing" : fmt::format("call {}'s data", u.call - 1)));
  if (idx && u.call > want)
    bad_.record(
        "no-overwrite-before-readers-done",
        fmt::format("rank {}'s application overwrote its input with call {}'s data before rank {} read unit {} of it "
                    "for call {}",
                    s.peer, u.call - 1, r, s.src, k.call));
  k.blocks[b].reg = s.kind == DirectStepKind::Copy ? u.value
                    : s.first                      ? add_in_rank_order(0, u.value)
                                                   : add_in_rank_order(k.blocks[b].reg, u.value);
}

void DirectWorld::store(std::uint32_t r, std::uint32_t b, std::uint32_t to, std::uint32_t dst, std::uint32_t value) {
  const std::uint32_t call = ranks_[r].call;
  const auto idx = peer_unit(r, b, to, false, dst, "wrote");
  if (!idx) return;
  const Rank& t = ranks_[to];
  if (to != r && t.consumed < call)
    bad_.record(
        "no-overwrite-before-readers-done",
        fmt::format("rank {} wrote unit {} of rank {}'s output for call {} before rank {} had consumed call {}'s", r,
                    dst, to, call, to, call - 1));
  if (to != r && t.consumed > call)
    bad_.record(
        "no-overwrite-before-readers-done",
        fmt::format("rank {} wrote unit {} of rank {}'s output for call {} after rank {} had returned and consumed "
                    "it",
                    r, dst, to, call, to));
  ranks_[to].memory[*idx] = Unit{value, static_cast<std::uint8_t>(call + 1)};
}

void DirectWorld::step(std::uint32_t r, std::uint32_t b) {
  Rank& k = ranks_[r];
  const DirectStep s = k.blocks[b].program[k.blocks[b].pc];
  switch (s.kind) {
    case DirectStepKind::Post: {
      Slot& slot = ranks_[s.peer].slots[b * m_.ranks + r];
      slot.epoch = s.epoch;
      if (s.offsets && !(m_.mutation == DirectMutation::StartWithoutOffsets && k.call > 0)) {
        slot.input_offset = input_offset(r, k.call);
        slot.output_offset = output_offset(r, k.call);
      }
      break;
    }
    case DirectStepKind::Wait: break;  // enabled only when satisfied
    case DirectStepKind::Copy:
      load(r, b, s);
      store(r, b, s.to, s.dst, k.blocks[b].reg);
      break;
    case DirectStepKind::Load: load(r, b, s); break;
    case DirectStepKind::Store: store(r, b, s.to, s.dst, k.blocks[b].reg); break;
  }
  Block& blk = k.blocks[b];
  ++blk.pc;
  // A register no later step reads is dead: clear it, so that it splits no states.
  const bool live =
      blk.pc < blk.program.size() && (blk.program[blk.pc].kind == DirectStepKind::Store ||
                                      (blk.program[blk.pc].kind == DirectStepKind::Load && !blk.program[blk.pc].first));
  if (!live) blk.reg = 0;
  if (std::all_of(k.blocks.begin(), k.blocks.end(), [](const Block& x) { return x.pc == x.program.size(); }))
    k.phase = FastPhase::After;
}

void DirectWorld::apply(const DirectChoice& c) {
  Rank& k = ranks_[c.rank];
  switch (c.kind) {
    case DirectChoice::Kind::Between: between(c.rank); break;
    case DirectChoice::Kind::Step: step(c.rank, c.block); break;
    case DirectChoice::Kind::Kill:
      k.phase = FastPhase::Dead;
      ++deaths_;
      break;
    case DirectChoice::Kind::Timeout:
      if (m_.mutation == DirectMutation::TimeoutSkips) {
        // Nothing can step: every block left is at a wait. Each goes past it.
        k.skipped_wait = true;
        for (std::uint8_t b = 0; b < m_.blocks; ++b)
          if (k.blocks[b].pc < k.blocks[b].program.size()) step(c.rank, b);
        break;
      }
      k.phase = FastPhase::Failed;
      for (const Block& blk : k.blocks)
        if (blk.pc < blk.program.size() && blk.program[blk.pc].kind == DirectStepKind::Wait) {
          k.waited_peer = blk.program[blk.pc].peer;
          break;
        }
      break;
  }
}

std::string DirectWorld::describe_choice(const DirectChoice& c) const {
  const Rank& k = ranks_[c.rank];
  switch (c.kind) {
    case DirectChoice::Kind::Between: {
      std::string what = k.phase == FastPhase::After ? fmt::format("consumes call {}'s output", k.call) : "";
      const std::uint32_t next = k.phase == FastPhase::After ? k.call + 1 : k.call;
      if (next < m_.calls)
        what += fmt::format("{}writes input at {:#x}, starts call {} ({})", what.empty() ? "" : "; ",
                            input_offset(c.rank, next), next, to_string(op_of(next)));
      return fmt::format("r{} {}", c.rank, what);
    }
    case DirectChoice::Kind::Step: {
      const Block& blk = k.blocks[c.block];
      const DirectStep& s = blk.program[blk.pc];
      std::string seen;
      if (s.kind == DirectStepKind::Wait)
        seen = fmt::format(" (the slot holds epoch {})", k.slots[c.block * m_.ranks + s.peer].epoch);
      return fmt::format("r{} call {} block {} step {}: {}{}", c.rank, k.call, c.block, blk.pc + 1, describe(s), seen);
    }
    case DirectChoice::Kind::Kill: return fmt::format("r{} dies", c.rank);
    case DirectChoice::Kind::Timeout: return fmt::format("r{} times out in call {}", c.rank, k.call);
  }
  return "?";
}

std::uint64_t DirectWorld::fingerprint() const {
  StateHasher h;
  h.add(deaths_);
  for (const auto& k : ranks_) {
    h.add(k.phase);
    h.add(k.call);
    h.add(k.consumed);
    h.add(k.waited_peer.value_or(99));
    h.add(k.skipped_wait);
    for (const auto& b : k.blocks) {
      h.add(b.pc);
      h.add(b.reg);
    }
    for (const auto& s : k.slots) {
      h.add(s.input_offset);
      h.add(s.output_offset);
      h.add(s.epoch);
    }
    for (const auto& u : k.memory) {
      h.add(u.value);
      h.add(u.call);
    }
  }
  h.add(static_cast<std::uint64_t>(bad_.size()));
  return h.value();
}

}  // namespace railcheck::verify::zerobuf
