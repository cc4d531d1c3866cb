#include "verify/zerobuf/ll_world.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cassert>

#include "engine/core/state_hash.hpp"

namespace railcheck::verify::zerobuf {

using namespace railcheck::zerobuf;

namespace {

constexpr std::array<std::pair<LlMutation, std::string_view>, 8> kLlMutations = {{
    {LlMutation::None, "none"},
    {LlMutation::SingleBuffer, "single-buffer"},
    {LlMutation::OneFlagPerLine, "one-flag-per-line"},
    {LlMutation::GraphReplaysEpoch, "graph-replays-epoch"},
    {LlMutation::InPlaceSumBeforeSend, "in-place-sum-before-send"},
    {LlMutation::SlotLinesPerCall, "slot-lines-per-call"},
    {LlMutation::TimeoutSkips, "timeout-skips"},
    {LlMutation::TwoShotSameEpoch, "two-shot-same-epoch"},
}};

bool has(std::uint32_t mask, std::uint32_t bit) { return ((mask >> bit) & 1U) != 0; }

std::uint32_t data_of(const LlLine& l, std::uint32_t half) { return half == 0 ? l.data0 : l.data1; }

}  // namespace

std::string_view to_string(LlMutation m) {
  for (const auto& [k, name] : kLlMutations)
    if (k == m) return name;
  return "?";
}

std::optional<LlMutation> parse_ll_mutation(std::string_view s) {
  for (const auto& [k, name] : kLlMutations)
    if (name == s) return k;
  return std::nullopt;
}

std::string_view ll_mutation_names() {
  return "none, single-buffer, one-flag-per-line, graph-replays-epoch, in-place-sum-before-send, "
         "slot-lines-per-call, timeout-skips, two-shot-same-epoch";
}

std::string describe(const LlModel& m) {
  std::string ops, pieces;
  for (const auto k : m.ops) ops += (ops.empty() ? "" : ", ") + std::string(to_string(k));
  for (const auto b : m.piece_bytes)
    pieces += fmt::format("{}{} B ({} lines)", pieces.empty() ? "" : ", ", b, ll_lines(b));
  return fmt::format("{} ranks, {} LL calls of [{}]{}{}, pieces [{}], first epoch {}, {} dead rank(s){}", m.ranks,
                     m.calls, ops, m.two_shot ? " (all-reduce two-shot)" : "",
                     m.in_place ? " (all-reduce in place)" : "", pieces, m.first_epoch, m.dead_ranks,
                     m.mutation == LlMutation::None ? "" : fmt::format(", mutation {}", to_string(m.mutation)));
}

std::string to_string(const LlChoice& c) {
  switch (c.kind) {
    case LlChoice::Kind::Between: return fmt::format("between r{}", c.rank);
    case LlChoice::Kind::Send: return fmt::format("send r{} r{} l{} h{}", c.rank, c.peer, c.line, c.half);
    case LlChoice::Kind::Receive: return fmt::format("receive r{} r{} l{}", c.rank, c.peer, c.line);
    case LlChoice::Kind::Kill: return fmt::format("kill r{}", c.rank);
    case LlChoice::Kind::Timeout: return fmt::format("timeout r{}", c.rank);
    case LlChoice::Kind::GatherSend: return fmt::format("gather-send r{} r{} l{} h{}", c.rank, c.peer, c.line, c.half);
    case LlChoice::Kind::GatherReceive: return fmt::format("gather-receive r{} r{} l{}", c.rank, c.peer, c.line);
  }
  return "?";
}

std::optional<LlChoice> parse_ll_choice(std::string_view s) {
  constexpr std::uint32_t kLines = ll_lines(LlWorld::kMaxPieceBytes);
  using K = LlChoice::Kind;
  for (const K kind : {K::Between, K::Send, K::Receive, K::Kill, K::Timeout, K::GatherSend, K::GatherReceive})
    for (std::uint8_t r = 0; r < LlWorld::kMaxRanks; ++r)
      for (std::uint8_t p = 0; p < LlWorld::kMaxRanks; ++p)
        for (std::uint8_t l = 0; l < kLines; ++l)
          for (std::uint8_t h = 0; h < 2; ++h) {
            LlChoice c{kind, r};
            if (kind == K::Send || kind == K::Receive || kind == K::GatherSend || kind == K::GatherReceive) {
              c.peer = p;
              c.line = l;
            }
            if (kind == K::Send || kind == K::GatherSend) c.half = h;
            if (to_string(c) == s) return c;
          }
  return std::nullopt;
}

LlWorld::LlWorld(const LlModel& m) : m_(m) {
  assert(m.ranks >= 2 && m.ranks <= kMaxRanks && !m.piece_bytes.empty());
  for (const auto b : m.piece_bytes) {
    assert(b % 4 == 0 && b > 0 && b <= kMaxPieceBytes);
    lines_ = std::max(lines_, static_cast<std::uint32_t>(ll_lines(b)));
  }
  for (std::uint32_t c = 0; c < m.calls && m.two_shot; ++c)
    assert(op_of(c) != FastOp::AllReduce || ll_two_shot_ok(piece_bytes(c), m.ranks));
  for (std::uint32_t r = 0; r < m.ranks; ++r) {
    Rank k;
    k.next_epoch = m.first_epoch;
    k.area.assign(ll_area_bytes(m.ranks, lines_) / sizeof(LlLine), LlLine{0, 0, 0, 0});
    ranks_.push_back(std::move(k));
  }
}

std::uint32_t LlWorld::parity(std::uint32_t epoch) const {
  return m_.mutation == LlMutation::SingleBuffer ? 0 : ll_parity(epoch);
}

std::uint32_t LlWorld::lines_of(std::uint32_t call) const {
  return static_cast<std::uint32_t>(ll_lines(piece_bytes(call)));
}

std::uint32_t LlWorld::part_word(std::uint32_t call, std::uint32_t q) const {
  return static_cast<std::uint32_t>(ll_two_shot_part(piece_bytes(call), q, m_.ranks).offset / 4);
}
std::uint32_t LlWorld::part_words(std::uint32_t call, std::uint32_t q) const {
  return static_cast<std::uint32_t>(ll_two_shot_part(piece_bytes(call), q, m_.ranks).bytes / 4);
}
std::uint32_t LlWorld::part_lines(std::uint32_t call, std::uint32_t q) const {
  return static_cast<std::uint32_t>(ll_lines(ll_two_shot_part(piece_bytes(call), q, m_.ranks).bytes));
}

std::uint32_t LlWorld::lines_to(std::uint32_t r, std::uint32_t p) const {
  const std::uint32_t call = ranks_[r].call;
  return two_shot(call) ? part_lines(call, p) : lines_of(call);
}
std::uint32_t LlWorld::lines_from(std::uint32_t r) const {
  const std::uint32_t call = ranks_[r].call;
  return two_shot(call) ? part_lines(call, r) : lines_of(call);
}

std::uint32_t LlWorld::sum_token(std::uint32_t call, std::uint32_t word) const {
  std::uint32_t acc = 0;
  for (std::uint32_t q = 0; q < m_.ranks; ++q) acc = add_in_rank_order(acc, input_token(q, call, word));
  return acc;
}

std::size_t LlWorld::line_index(std::uint32_t call, std::uint32_t par, std::uint32_t sender, std::uint32_t line) const {
  const std::uint32_t slot_lines = m_.mutation == LlMutation::SlotLinesPerCall ? lines_of(call) : lines_;
  return ll_slot_offset(par, sender, m_.ranks, slot_lines) / sizeof(LlLine) + line;
}

std::uint32_t LlWorld::all_sent(std::uint32_t r) const {
  std::uint32_t mask = 0;
  for (std::uint32_t p = 0; p < m_.ranks; ++p)
    if (p != r)
      for (std::uint32_t b = 0; b < 2 * lines_to(r, p); ++b) mask |= 1U << (p * 2 * lines_ + b);
  return mask;
}

std::uint32_t LlWorld::all_received(std::uint32_t r) const {
  std::uint32_t mask = 0;
  for (std::uint32_t p = 0; p < m_.ranks; ++p)
    if (p != r)
      for (std::uint32_t l = 0; l < lines_from(r); ++l) mask |= 1U << (p * lines_ + l);
  return mask;
}

std::uint32_t LlWorld::all_sent2(std::uint32_t r) const {
  const std::uint32_t call = ranks_[r].call;
  std::uint32_t mask = 0;
  if (!two_shot(call)) return mask;
  for (std::uint32_t p = 0; p < m_.ranks; ++p)
    if (p != r)
      for (std::uint32_t b = 0; b < 2 * part_lines(call, r); ++b) mask |= 1U << (p * 2 * lines_ + b);
  return mask;
}

std::uint32_t LlWorld::all_received2(std::uint32_t r) const {
  const std::uint32_t call = ranks_[r].call;
  std::uint32_t mask = 0;
  if (!two_shot(call)) return mask;
  for (std::uint32_t p = 0; p < m_.ranks; ++p)
    if (p != r)
      for (std::uint32_t l = 0; l < part_lines(call, p); ++l) mask |= 1U << (p * lines_ + l);
  return mask;
}

// Two-shot: every peer's line `line` of r's part is in, so r has written its sum.
bool LlWorld::line_summed(std::uint32_t r, std::uint32_t line) const {
  for (std::uint32_t q = 0; q < m_.ranks; ++q)
    if (q != r && !has(ranks_[r].received, q * lines_ + line)) return false;
  return true;
}

bool LlWorld::line_sent_to_all(std::uint32_t r, std::uint32_t line) const {
  for (std::uint32_t p = 0; p < m_.ranks; ++p)
    if (p != r)
      for (std::uint32_t h = 0; h < 2; ++h)
        if (!has(ranks_[r].sent, (p * lines_ + line) * 2 + h)) return false;
  return true;
}

// Whether taking line `line` from `p` is the last piece of that line a reducing op waits for.
bool LlWorld::completes_line(std::uint32_t r, std::uint32_t p, std::uint32_t line) const {
  if (!fast_reduces(op_of(ranks_[r].call))) return false;
  for (std::uint32_t q = 0; q < m_.ranks; ++q)
    if (q != r && q != p && !has(ranks_[r].received, q * lines_ + line)) return false;
  return true;
}

bool LlWorld::can_receive(std::uint32_t r, std::uint32_t p, std::uint32_t line) const {
  const Rank& k = ranks_[r];
  const LlLine& l = k.area[line_index(k.call, parity(k.epoch), p, line)];
  const bool ready = m_.mutation == LlMutation::OneFlagPerLine ? l.flag1 == k.epoch : ll_line_ready(l, k.epoch);
  if (!ready) return false;
  // In place the sum overwrites the input line it is about to send: send it first.
  // (The two-shot sends no line of its own part, the one its sums overwrite.)
  if (in_place(k.call) && !two_shot(k.call) && m_.mutation != LlMutation::InPlaceSumBeforeSend &&
      completes_line(r, p, line))
    return line_sent_to_all(r, line);
  return true;
}

std::vector<LlChoice> LlWorld::choices() const {
  std::vector<LlChoice> out;
  using K = LlChoice::Kind;
  for (std::uint8_t r = 0; r < m_.ranks; ++r) {
    const Rank& k = ranks_[r];
    if (k.phase == FastPhase::Before || k.phase == FastPhase::After) out.push_back(LlChoice{K::Between, r});
    if (k.phase != FastPhase::InCall) continue;
    const bool two = two_shot(k.call);
    for (std::uint8_t p = 0; p < m_.ranks; ++p) {
      if (p == r) continue;
      for (std::uint8_t l = 0; l < lines_to(r, p); ++l)
        for (std::uint8_t h = 0; h < 2; ++h)
          if (!has(k.sent, (p * lines_ + l) * 2 + h)) out.push_back(LlChoice{K::Send, r, p, l, h});
      for (std::uint8_t l = 0; l < lines_from(r); ++l)
        if (!has(k.received, p * lines_ + l) && can_receive(r, p, l)) out.push_back(LlChoice{K::Receive, r, p, l});
      if (!two) continue;
      for (std::uint8_t l = 0; l < part_lines(k.call, r); ++l)
        for (std::uint8_t h = 0; h < 2; ++h)
          if (!has(k.sent2, (p * lines_ + l) * 2 + h) && line_summed(r, l))
            out.push_back(LlChoice{K::GatherSend, r, p, l, h});
      for (std::uint8_t l = 0; l < part_lines(k.call, p); ++l) {
        const LlLine& got = k.area[line_index(k.call, parity(k.epoch2), p, l)];
        const bool ready =
            m_.mutation == LlMutation::OneFlagPerLine ? got.flag1 == k.epoch2 : ll_line_ready(got, k.epoch2);
        if (!has(k.received2, p * lines_ + l) && ready) out.push_back(LlChoice{K::GatherReceive, r, p, l});
      }
    }
  }
  const bool stepped = !out.empty();
  if (deaths_ < m_.dead_ranks)
    for (std::uint8_t r = 0; r < m_.ranks; ++r)
      if (ranks_[r].phase != FastPhase::Finished && ranks_[r].phase != FastPhase::Dead &&
          ranks_[r].phase != FastPhase::Failed)
        out.push_back(LlChoice{K::Kill, r});
  // Timeouts are longer than any progress: they fire only when no rank can take a step.
  if (!stepped)
    for (std::uint8_t r = 0; r < m_.ranks; ++r)
      if (ranks_[r].phase == FastPhase::InCall) out.push_back(LlChoice{K::Timeout, r});
  return out;
}

std::vector<std::uint32_t>& LlWorld::out_of(std::uint32_t r) {
  return in_place(ranks_[r].call) ? ranks_[r].input : ranks_[r].output;
}
const std::vector<std::uint32_t>& LlWorld::out_of(std::uint32_t r) const {
  return in_place(ranks_[r].call) ? ranks_[r].input : ranks_[r].output;
}

void LlWorld::between(std::uint32_t r) {
  Rank& k = ranks_[r];
  const std::uint32_t n = m_.ranks;
  if (k.phase == FastPhase::After) {
    if (auto bad = output_mismatch(op_of(k.call), piece_words(k.call), r, n, k.call, out_of(r)))
      bad_.record("ll-output-matches-spec", "the application consumed " + *bad);
    if (++k.call == m_.calls) {
      k.phase = FastPhase::Finished;
      return;
    }
  }
  // The application writes the input (the output buffer keeps what it held), then calls.
  const FastOp op = op_of(k.call);
  const std::uint32_t pw = piece_words(k.call), bytes = piece_bytes(k.call);
  k.input.assign(input_words(op, pw, n), 0);
  for (std::uint32_t i = 0; i < k.input.size(); ++i) k.input[i] = input_token(r, k.call, i);
  if (!in_place(k.call)) {
    k.output.resize(output_words(op, pw, n), 0);
    if (!fast_reduces(op)) {  // the own block: a local copy
      const auto from = piece_to(op, bytes, r).offset / 4, to = piece_at(op, bytes, r).offset / 4;
      for (std::uint32_t i = 0; i < pw; ++i) k.output[to + i] = k.input[from + i];
    }
  }
  k.epoch = k.next_epoch;
  // Two-shot: phase 2 takes the epoch after phase 1's (ll_two_shot_epoch2 of the counter).
  k.epoch2 = !two_shot(k.call) ? 0 : m_.mutation == LlMutation::TwoShotSameEpoch ? k.epoch : ll_next_epoch(k.epoch);
  k.sent = k.received = k.sent2 = k.received2 = 0;
  k.held.assign(static_cast<std::size_t>(n) * pw, 0);
  k.phase = FastPhase::InCall;
}

void LlWorld::send(std::uint32_t r, std::uint32_t p, std::uint32_t line, std::uint32_t half) {
  Rank& k = ranks_[r];
  const std::uint32_t word = 2 * line + half;
  const bool two = two_shot(k.call);
  const auto from = two ? part_word(k.call, p) : piece_to(op_of(k.call), piece_bytes(k.call), p).offset / 4;
  const std::uint32_t limit = two ? part_words(k.call, p) : piece_words(k.call);
  const std::uint32_t data = word < limit ? k.input[from + word] : 0;  // past the piece: flag only
  LlLine& l = ranks_[p].area[line_index(k.call, parity(k.epoch), r, line)];
  (half == 0 ? l.data0 : l.data1) = data;
  (half == 0 ? l.flag0 : l.flag1) = k.epoch;
  k.sent |= 1U << ((p * lines_ + line) * 2 + half);
  end_call_if_done(r);
}

void LlWorld::receive(std::uint32_t r, std::uint32_t p, std::uint32_t line) {
  Rank& k = ranks_[r];
  const FastOp op = op_of(k.call);
  const std::uint32_t pw = piece_words(k.call), bytes = piece_bytes(k.call);
  const LlLine l = k.area[line_index(k.call, parity(k.epoch), p, line)];
  const bool completes = completes_line(r, p, line);
  // Two-shot phase 1: the lines are those of r's own part, which its sums overwrite.
  const bool two = two_shot(k.call);
  const auto sent_from = two ? part_word(k.call, r) : piece_to(op, bytes, r).offset / 4;
  const std::uint32_t limit = two ? part_words(k.call, r) : pw;
  for (std::uint32_t h = 0; h < 2; ++h) {
    const std::uint32_t word = 2 * line + h;
    if (word >= limit) break;
    const std::uint32_t v = data_of(l, h), want = input_token(p, k.call, sent_from + word);
    if (v != want) {
      const auto c = token_call(v);
      const char* what = !c ? "not a sent value" : *c < k.call ? "stale" : *c > k.call ? "from a later call" : "torn";
      bad_.record(
          "ll-accepts-call-data",
          fmt::format("rank {} took line {} from rank {} for call {} (epoch {}): half {} holds {} where {} belongs "
                      "({}; flags {} / {})",
                      r, line, p, k.call, k.epoch, h, describe_token(v), describe_token(want), what, l.flag0, l.flag1));
    }
    if (fast_reduces(op))
      k.held[p * pw + word] = v;
    else
      out_of(r)[piece_at(op, bytes, p).offset / 4 + word] = v;
  }
  k.received |= 1U << (p * lines_ + line);
  if (completes) {  // every rank's line is in: sum in rank order, own input included
    auto& out = out_of(r);
    const auto to = two ? sent_from : piece_at(op, bytes, r).offset / 4;
    for (std::uint32_t word = 2 * line; word < 2 * line + 2 && word < limit; ++word) {
      std::uint32_t acc = 0;
      for (std::uint32_t q = 0; q < m_.ranks; ++q)
        acc = add_in_rank_order(acc, q == r ? k.input[sent_from + word] : k.held[q * pw + word]);
      for (std::uint32_t q = 0; q < m_.ranks; ++q) k.held[q * pw + word] = 0;  // registers, dead now
      out[to + word] = acc;
    }
  }
  end_call_if_done(r);
}

void LlWorld::gather_send(std::uint32_t r, std::uint32_t p, std::uint32_t line, std::uint32_t half) {
  Rank& k = ranks_[r];
  const std::uint32_t word = 2 * line + half, from = part_word(k.call, r);
  const std::uint32_t data = word < part_words(k.call, r) ? out_of(r)[from + word] : 0;
  LlLine& l = ranks_[p].area[line_index(k.call, parity(k.epoch2), r, line)];
  (half == 0 ? l.data0 : l.data1) = data;
  (half == 0 ? l.flag0 : l.flag1) = k.epoch2;
  k.sent2 |= 1U << ((p * lines_ + line) * 2 + half);
  end_call_if_done(r);
}

void LlWorld::gather_receive(std::uint32_t r, std::uint32_t p, std::uint32_t line) {
  Rank& k = ranks_[r];
  const LlLine l = k.area[line_index(k.call, parity(k.epoch2), p, line)];
  const std::uint32_t at = part_word(k.call, p);
  for (std::uint32_t h = 0; h < 2; ++h) {
    const std::uint32_t word = 2 * line + h;
    if (word >= part_words(k.call, p)) break;
    const std::uint32_t v = data_of(l, h), want = sum_token(k.call, at + word);
    if (v != want) {
      const char* what = v == 0 ? "nothing" : token_call(v) ? "an input word, not a sum" : "another sum";
      bad_.record("ll-accepts-call-data",
                  fmt::format("rank {} took gathered line {} of rank {}'s part for call {} (epoch {}): half {} holds "
                              "{} where {} belongs ({}; flags {} / {})",
                              r, line, p, k.call, k.epoch2, h, describe_token(v), describe_token(want), what, l.flag0,
                              l.flag1));
    }
    out_of(r)[at + word] = v;
  }
  k.received2 |= 1U << (p * lines_ + line);
  end_call_if_done(r);
}

void LlWorld::end_call_if_done(std::uint32_t r) {
  Rank& k = ranks_[r];
  if (k.sent != all_sent(r) || k.received != all_received(r)) return;
  if (k.sent2 != all_sent2(r) || k.received2 != all_received2(r)) return;
  k.phase = FastPhase::After;
  if (m_.mutation != LlMutation::GraphReplaysEpoch)
    k.next_epoch = ll_next_epoch(two_shot(k.call) ? k.epoch2 : k.next_epoch);
}

void LlWorld::apply(const LlChoice& c) {
  Rank& k = ranks_[c.rank];
  switch (c.kind) {
    case LlChoice::Kind::Between: between(c.rank); break;
    case LlChoice::Kind::Send: send(c.rank, c.peer, c.line, c.half); break;
    case LlChoice::Kind::Receive: receive(c.rank, c.peer, c.line); break;
    case LlChoice::Kind::GatherSend: gather_send(c.rank, c.peer, c.line, c.half); break;
    case LlChoice::Kind::GatherReceive: gather_receive(c.rank, c.peer, c.line); break;
    case LlChoice::Kind::Kill:
      k.phase = FastPhase::Dead;
      ++deaths_;
      break;
    case LlChoice::Kind::Timeout:
      if (m_.mutation == LlMutation::TimeoutSkips) {
        k.skipped_wait = true;
        k.received = all_received(c.rank);
        k.received2 = all_received2(c.rank);
        end_call_if_done(c.rank);
        break;
      }
      k.phase = FastPhase::Failed;
      for (std::uint32_t p = 0; p < m_.ranks && !k.waited_peer; ++p)
        if (p != c.rank && ((k.received ^ all_received(c.rank)) >> (p * lines_) & ((1U << lines_) - 1)) != 0)
          k.waited_peer = p;
      for (std::uint32_t p = 0; p < m_.ranks && !k.waited_peer; ++p)
        if (p != c.rank && ((k.received2 ^ all_received2(c.rank)) >> (p * lines_) & ((1U << lines_) - 1)) != 0)
          k.waited_peer = p;
      break;
  }
}

std::string LlWorld::describe_choice(const LlChoice& c) const {
  const Rank& k = ranks_[c.rank];
  const auto at = [&] {
    return fmt::format("r{} call {} (epoch {}, parity {})", c.rank, k.call, k.epoch, parity(k.epoch));
  };
  switch (c.kind) {
    case LlChoice::Kind::Between: {
      std::string what = k.phase == FastPhase::After ? fmt::format("consumes call {}'s output", k.call) : "";
      const std::uint32_t next = k.phase == FastPhase::After ? k.call + 1 : k.call;
      if (next < m_.calls)
        what += fmt::format("{}writes input, starts call {} ({}, epoch {})", what.empty() ? "" : "; ", next,
                            to_string(op_of(next)), k.next_epoch);
      return fmt::format("r{} {}", c.rank, what);
    }
    case LlChoice::Kind::Send: {
      const std::uint32_t word = 2 * c.line + c.half;
      const bool two = two_shot(k.call);
      const auto from =
          two ? part_word(k.call, c.peer) : piece_to(op_of(k.call), piece_bytes(k.call), c.peer).offset / 4;
      const std::uint32_t limit = two ? part_words(k.call, c.peer) : piece_words(k.call);
      return fmt::format("{}: half {} of line {} into r{}'s area [{}][{}] (area line {}) = {{{}, flag {}}}", at(),
                         c.half, c.line, c.peer, parity(k.epoch), c.rank,
                         line_index(k.call, parity(k.epoch), c.rank, c.line),
                         word < limit ? describe_token(k.input[from + word]) : "no data", k.epoch);
    }
    case LlChoice::Kind::Receive: {
      const LlLine& l = k.area[line_index(k.call, parity(k.epoch), c.peer, c.line)];
      return fmt::format("{}: takes line {} from r{} = {{{}, flag {}}} {{{}, flag {}}}", at(), c.line, c.peer,
                         describe_token(l.data0), l.flag0, describe_token(l.data1), l.flag1);
    }
    case LlChoice::Kind::GatherSend: {
      const std::uint32_t word = 2 * c.line + c.half;
      return fmt::format(
          "{}: phase 2, half {} of summed line {} into r{}'s area [{}][{}] (area line {}) = {{{}, flag {}}}", at(),
          c.half, c.line, c.peer, parity(k.epoch2), c.rank, line_index(k.call, parity(k.epoch2), c.rank, c.line),
          word < part_words(k.call, c.rank) ? describe_token(out_of(c.rank)[part_word(k.call, c.rank) + word])
                                            : "no data",
          k.epoch2);
    }
    case LlChoice::Kind::GatherReceive: {
      const LlLine& l = k.area[line_index(k.call, parity(k.epoch2), c.peer, c.line)];
      return fmt::format("{}: phase 2, takes line {} of r{}'s part = {{{}, flag {}}} {{{}, flag {}}}", at(), c.line,
                         c.peer, describe_token(l.data0), l.flag0, describe_token(l.data1), l.flag1);
    }
    case LlChoice::Kind::Kill: return fmt::format("r{} dies", c.rank);
    case LlChoice::Kind::Timeout: return fmt::format("{}: times out waiting for its lines", at());
  }
  return "?";
}

std::uint64_t LlWorld::fingerprint() const {
  StateHasher h;
  h.add(deaths_);
  for (const auto& k : ranks_) {
    h.add(k.phase);
    h.add(k.call);
    h.add(k.epoch);
    h.add(k.next_epoch);
    h.add(k.epoch2);
    h.add(k.sent);
    h.add(k.received);
    h.add(k.sent2);
    h.add(k.received2);
    h.add(k.waited_peer.value_or(99));
    h.add(k.skipped_wait);
    for (const auto w : k.input) h.add(w);
    h.add(static_cast<std::uint64_t>(k.output.size()));
    for (const auto w : k.output) h.add(w);
    for (const auto w : k.held) h.add(w);
    for (const auto& l : k.area) {
      h.add(l.data0);
      h.add(l.flag0);
      h.add(l.data1);
      h.add(l.flag1);
    }
  }
  h.add(static_cast<std::uint64_t>(bad_.size()));
  return h.value();
}

}  // namespace railcheck::verify::zerobuf
