// The verdict (triage_verdict.hpp).
#include "triage/triage_verdict.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "triage/call_sequence_check.hpp"
#include "triage/fr_replay.hpp"

namespace railcheck::triage {
namespace {

std::vector<std::uint32_t> ranks_without_dump(const std::vector<FrDump>& dumps) {
  std::set<std::uint32_t> named, have;
  for (const auto& d : dumps) {
    have.insert(d.rank);
    for (const auto& pg : d.pgs) named.insert(pg.ranks.begin(), pg.ranks.end());
  }
  std::vector<std::uint32_t> out;
  for (auto r : named)
    if (!have.count(r)) out.push_back(r);
  return out;
}

std::string label(const FrEntry& e) {
  if (e.is_p2p) return e.describe();
  return fmt::format("#{} {}", e.coll_seq, e.describe());
}

// Where a rank stands: the last call that completed and the first that did not. Calls of one
// group run in issue order on one stream, so everything before a completed call completed.
struct Standing {
  const FrEntry* last_done = nullptr;
  const FrEntry* waiting = nullptr;
};

Standing standing_of(const FrDump& d) {
  Standing s;
  std::size_t done = 0;
  for (std::size_t i = 0; i < d.entries.size(); ++i)
    if (d.entries[i].completed()) done = i + 1;
  for (std::size_t i = done; i-- > 0;)
    if (!is_p2p_batch_marker(d.entries, i) && d.entries[i].op != "coalesced") {
      s.last_done = &d.entries[i];
      break;
    }
  for (std::size_t i = done; i < d.entries.size(); ++i)
    if (!is_p2p_batch_marker(d.entries, i) && d.entries[i].op != "coalesced") {
      s.waiting = &d.entries[i];
      break;
    }
  return s;
}

std::string standing_text(const FrDump& d) {
  const auto s = standing_of(d);
  const std::string done = s.last_done ? fmt::format("last completed {}", label(*s.last_done)) : "completed no call";
  if (!s.waiting) return fmt::format("rank {}: completed every call it issued ({})", d.rank, done);
  return fmt::format("rank {}: waits in {} (state {}); {}{}", d.rank, label(*s.waiting), s.waiting->state, done,
                     s.waiting->site ? fmt::format("; called at {}", s.waiting->site->describe()) : "");
}

bool from_findings(const std::vector<FrDump>& dumps, Verdict& v) {
  const auto findings = check_call_sequences(dumps);
  if (findings.empty()) return false;
  const auto& f = findings.front();
  v.kind = Verdict::Kind::CallMismatch;
  v.headline = f.headline;
  v.ranks = f.ranks;
  v.details = f.details;
  for (std::size_t i = 1; i < findings.size(); ++i) v.details.push_back("also: " + findings[i].headline);
  return true;
}

bool from_replay(const std::vector<FrDump>& dumps, const std::vector<plan::LogFile>& logs, Verdict& v) {
  for (auto& r : replay_calls(dumps, logs)) {
    for (auto& n : r.notes) v.notes.push_back(fmt::format("process group {}: {}", r.pg, n));
    if (!r.result) {
      v.notes.push_back(fmt::format("process group {}: not replayed under the NCCL model: {}", r.pg, r.skipped));
      continue;
    }
    const auto& res = *r.result;
    if (res.agreement.first) {
      const auto& d = *res.agreement.first;
      v.kind = Verdict::Kind::NcclHang;
      v.ranks = {d.rank_a, d.rank_b};
      v.headline = fmt::format(
          "process group {}: NCCL's scheduling puts collective #{} on different channels on "
          "ranks {} and {}: {}",
          r.pg, d.coll_seq, d.rank_a, d.rank_b, plan::describe(d.kind));
      v.details.push_back(d.explanation);
      if (!res.execution.completed && res.execution.hang) v.details.push_back(res.execution.hang->describe());
      return true;
    }
    if (!res.execution.completed) {
      v.kind = Verdict::Kind::NcclHang;
      v.ranks = res.execution.stuck_ranks;
      v.headline = fmt::format(
          "process group {}: the calls agree, but NCCL's kernel plans wait on each other ({} of {} ranks never finish)",
          r.pg, res.execution.stuck_ranks.size(), r.input.shape.nranks);
      if (res.execution.hang) {
        std::string text = res.execution.hang->describe();
        while (!text.empty() && text.back() == '\n') text.pop_back();
        v.details.push_back(text);
      }
      return true;
    }
  }
  return false;
}

}  // namespace

std::string_view name(Verdict::Kind k) {
  switch (k) {
    case Verdict::Kind::NoProblem: return "no problem found";
    case Verdict::Kind::CallMismatch: return "call mismatch";
    case Verdict::Kind::NcclHang: return "NCCL-level hang";
    case Verdict::Kind::BelowNccl: return "below NCCL's scheduling";
  }
  return "?";
}

Verdict triage(const std::vector<FrDump>& dumps, const std::vector<plan::LogFile>& logs) {
  Verdict v;
  const auto dead = ranks_without_dump(dumps);
  if (from_findings(dumps, v)) {
    // Where each rank stands says whether NCCL hung on the mismatch or returned a wrong result.
    for (const auto& d : dumps) v.details.push_back(standing_text(d));
    return v;
  }
  if (dead.empty()) {
    if (from_replay(dumps, logs, v)) return v;
  } else {
    v.notes.push_back(
        fmt::format("not replayed under the NCCL model: {} gave no dump, so its calls are unknown", rank_list(dead)));
  }
  std::vector<std::uint32_t> waiting;
  for (const auto& d : dumps) {
    v.details.push_back(standing_text(d));
    if (standing_of(d).waiting) waiting.push_back(d.rank);
  }
  for (auto r : dead) v.details.push_back(fmt::format("rank {}: no dump (it died, or never reached its dump)", r));
  if (dead.empty() && waiting.empty()) {
    v.kind = Verdict::Kind::NoProblem;
    v.headline = fmt::format(
        "no problem found: {} ranks, every call completed, the calls agree and NCCL's "
        "scheduling completes them",
        dumps.size());
    return v;
  }
  v.kind = Verdict::Kind::BelowNccl;
  v.ranks = dead.empty() ? waiting : dead;
  v.headline = dead.empty()
                   ? fmt::format(
                         "the calls agree and NCCL's scheduling completes them, yet {} wait: the hang is below "
                         "NCCL's scheduling (a network fault, a kernel that never ends)",
                         rank_list(waiting))
                   : fmt::format(
                         "{} gave no dump and the others' calls agree: the hang is below NCCL's scheduling, "
                         "most likely {} died",
                         rank_list(dead), rank_list(dead));
  return v;
}

std::string render(const Verdict& v) {
  std::string out = fmt::format("verdict: {}\n{}\n", name(v.kind), v.headline);
  for (const auto& d : v.details) out += fmt::format("  {}\n", d);
  if (!v.notes.empty()) {
    out += "assumed:\n";
    for (const auto& n : v.notes) out += fmt::format("  {}\n", n);
  }
  return out;
}

}  // namespace railcheck::triage
