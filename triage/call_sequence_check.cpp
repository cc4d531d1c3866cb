// The call-sequence comparison (call_sequence_check.hpp).
#include "triage/call_sequence_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

namespace railcheck::triage {
namespace {

// One rank's view of one process group.
struct RankCalls {
  std::uint32_t rank = 0;                                     // global
  std::vector<const FrEntry*> entries;                        // of this group, in issue order
  std::map<std::int64_t, std::vector<const FrEntry*>> colls;  // by sequence number
  std::int64_t first_seq = 0, last_seq = 0;                   // the window the buffer still holds
  bool blocked = false;  // something it issued has not completed: it cannot have issued more
};

// Shapes that legitimately differ per rank: uneven all-to-all splits, a root's gather/scatter.
bool shapes_must_match(const std::string& op) {
  return op.find("to_all") == std::string::npos && op != "gather" && op != "scatter";
}

std::string signature(const std::vector<const FrEntry*>& es) {
  std::string s;
  for (const FrEntry* e : es) {
    s += e->op;
    if (shapes_must_match(e->op)) s += fmt::format("|{}", e->describe());
    s += ';';
  }
  return s;
}

std::string describe(const std::vector<const FrEntry*>& es) {
  std::vector<std::string> parts;
  for (const FrEntry* e : es) parts.push_back(e->describe());
  return fmt::format("{}", fmt::join(parts, " + "));
}

std::optional<CallSite> site_of(const std::vector<const FrEntry*>& es) {
  for (const FrEntry* e : es)
    if (e->site) return e->site;
  return std::nullopt;
}

RankCalls calls_of(const FrDump& d, const std::string& pg) {
  RankCalls rc;
  rc.rank = d.rank;
  for (std::size_t i = 0; i < d.entries.size(); ++i) {
    const FrEntry& e = d.entries[i];
    if (e.pg != pg) continue;
    rc.entries.push_back(&e);
    if (!e.is_p2p && e.coll_seq > 0 && !is_p2p_batch_marker(d.entries, i)) rc.colls[e.coll_seq].push_back(&e);
  }
  // CUDA runs a group's calls in issue order on one stream: once a later call completed, every
  // earlier one did, whatever state the watchdog last wrote for it.
  std::size_t done = 0;
  for (std::size_t i = 0; i < rc.entries.size(); ++i)
    if (rc.entries[i]->completed()) done = i + 1;
  rc.blocked = done < rc.entries.size();
  if (!rc.colls.empty()) {
    rc.first_seq = rc.colls.begin()->first;
    rc.last_seq = rc.colls.rbegin()->first;
  }
  return rc;
}

class PgCheck {
 public:
  PgCheck(const FrProcessGroup& pg, const std::vector<FrDump>& dumps) : pg_(pg) {
    for (const auto& d : dumps)
      if (d.pg(pg.id) != nullptr) ranks_.push_back(calls_of(d, pg.id));
  }

  void run(std::vector<SequenceFinding>& out) {
    if (ranks_.size() < 2) return;
    if (auto f = first_collective_finding()) out.push_back(std::move(*f));
    p2p_findings(out);
  }

 private:
  std::string where(std::int64_t seq) const {
    return fmt::format("collective #{} of process group {}{}", seq, pg_.id,
                       pg_.desc.empty() ? "" : fmt::format(" ({})", pg_.desc));
  }

  std::optional<SequenceFinding> first_collective_finding() const {
    std::int64_t lo = 0, hi = 0;
    for (const auto& r : ranks_) {
      if (r.colls.empty()) continue;
      lo = std::max(lo, r.first_seq);
      hi = std::max(hi, r.last_seq);
    }
    for (std::int64_t s = lo; s <= hi && lo > 0; ++s) {
      std::map<std::string, std::vector<std::uint32_t>> by_sig;
      std::map<std::string, std::vector<const FrEntry*>> example;
      std::vector<const RankCalls*> lacking;
      for (const auto& r : ranks_) {
        auto it = r.colls.find(s);
        if (it == r.colls.end()) {
          lacking.push_back(&r);
          continue;
        }
        const auto sig = signature(it->second);
        by_sig[sig].push_back(r.rank);
        example.emplace(sig, it->second);
      }
      // A shifted call site explains a mismatch better than the mismatch itself: say which call
      // was skipped, then what differs.
      if (auto skip = skipped_call(s)) return skip;
      if (by_sig.size() > 1) return mismatch(s, by_sig, example);
      std::vector<std::uint32_t> moved_on;
      for (const RankCalls* r : lacking)
        if (!r->blocked) moved_on.push_back(r->rank);
      if (!moved_on.empty() && !by_sig.empty())
        return missing(s, moved_on, by_sig.begin()->second, example.begin()->second);
    }
    return std::nullopt;
  }

  SequenceFinding mismatch(std::int64_t s, const std::map<std::string, std::vector<std::uint32_t>>& by_sig,
                           const std::map<std::string, std::vector<const FrEntry*>>& example) const {
    SequenceFinding f;
    f.kind = SequenceFinding::Kind::Mismatch;
    f.pg = pg_.id;
    f.seq = s;
    // The majority issued the right call; with a tie nobody can tell, and every side is named.
    std::size_t most = 0;
    for (const auto& [sig, ranks] : by_sig) most = std::max(most, ranks.size());
    const bool tie =
        std::count_if(by_sig.begin(), by_sig.end(), [&](auto& kv) { return kv.second.size() == most; }) > 1;
    std::vector<std::string> sides;
    for (const auto& [sig, ranks] : by_sig) {
      const auto& es = example.at(sig);
      sides.push_back(fmt::format("{} issued {}", rank_list(ranks), describe(es)));
      const auto site = site_of(es);
      f.details.push_back(fmt::format("{}: {}{}", rank_list(ranks), describe(es),
                                      site ? fmt::format(", called at {}", site->describe()) : ""));
      if (tie || ranks.size() < most) f.ranks.insert(f.ranks.end(), ranks.begin(), ranks.end());
    }
    std::sort(f.ranks.begin(), f.ranks.end());
    f.headline = fmt::format("{}: the ranks issued different calls: {}", where(s), fmt::join(sides, "; "));
    return f;
  }

  SequenceFinding missing(std::int64_t s, const std::vector<std::uint32_t>& moved_on,
                          const std::vector<std::uint32_t>& have, const std::vector<const FrEntry*>& es) const {
    SequenceFinding f;
    f.kind = SequenceFinding::Kind::Missing;
    f.pg = pg_.id;
    f.seq = s;
    f.ranks = moved_on;
    f.headline = fmt::format("{} ({}): issued by {}, never by {}, whose calls all completed", where(s), describe(es),
                             rank_list(have), rank_list(moved_on));
    for (std::uint32_t r : moved_on) {
      const RankCalls& rc = of(r);
      if (rc.colls.empty()) {
        f.details.push_back(fmt::format("rank {} issued no collective in this group", r));
        continue;
      }
      const auto& last = rc.colls.rbegin()->second;
      f.details.push_back(fmt::format("rank {}'s last collective is #{}: {}", r, rc.last_seq, describe(last)));
    }
    return f;
  }

  // A rank whose call at #t comes from the line the others reach at #t+k skipped k calls (it is
  // shifted), even where the calls look alike and NCCL paired them. Needs stack frames. In a
  // loop of alternating calls (A B A B) both sides look shifted at #t; the true shift holds
  // for every later call both sides issued (hosts run ahead of the GPUs, so there are some),
  // and the explanation with the most such calls wins.
  std::optional<SequenceFinding> skipped_call(std::int64_t s) const {
    std::map<std::string, std::vector<const RankCalls*>> by_site;
    for (const auto& r : ranks_) {
      auto it = r.colls.find(s);
      if (it == r.colls.end()) continue;
      const auto site = site_of(it->second);
      if (!site) return std::nullopt;
      by_site[fmt::format("{}:{}", site->file, site->line)].push_back(&r);
    }
    if (by_site.size() != 2) return std::nullopt;
    const auto& a = by_site.begin()->second;
    const auto& b = std::next(by_site.begin())->second;
    struct Shift {
      const std::vector<const RankCalls*>* shifted;
      const std::vector<const RankCalls*>* others;
      std::int64_t k;
      int agreeing;
    };
    std::optional<Shift> best;
    for (const auto* pair : {&a, &b}) {
      const auto* others = pair == &a ? &b : &a;
      for (std::int64_t k = 1; k <= 3; ++k) {
        const int n = shift_holds(*pair, *others, s, k);
        if (n > 0 && (!best || n > best->agreeing)) best = Shift{pair, others, k, n};
      }
    }
    if (!best) return std::nullopt;
    const auto& shifted = *best->shifted;
    const auto& others = *best->others;
    const std::int64_t k = best->k;
    SequenceFinding f;
    f.kind = SequenceFinding::Kind::Missing;
    f.pg = pg_.id;
    f.seq = s;
    for (const auto* r : shifted) f.ranks.push_back(r->rank);
    std::vector<std::uint32_t> other_ranks;
    for (const auto* r : others) other_ranks.push_back(r->rank);
    const auto& skipped = others.front()->colls.at(s);
    const auto site = *site_of(skipped);
    f.headline =
        fmt::format("{}: {} skipped {} call{} that {} issued: the first is {} at {}", where(s), rank_list(f.ranks), k,
                    k == 1 ? "" : "s", rank_list(other_ranks), describe(skipped), site.describe());
    const auto mine = *site_of(shifted.front()->colls.at(s));
    f.details.push_back(fmt::format("{}'s calls from #{} on were called where {} called #{} on ({} call{})",
                                    rank_list(f.ranks), s, rank_list(other_ranks), s + k, best->agreeing,
                                    best->agreeing == 1 ? " agrees" : "s agree"));
    f.details.push_back(fmt::format("{}'s #{} was called at {}", rank_list(f.ranks), s, mine.describe()));
    return f;
  }

  // How many calls from #s on agree with `shifted` running k calls behind `others` (0 when one
  // disagrees or none can be compared).
  int shift_holds(const std::vector<const RankCalls*>& shifted, const std::vector<const RankCalls*>& others,
                  std::int64_t s, std::int64_t k) const {
    int agreeing = 0;
    for (std::int64_t t = s;; ++t) {
      auto it = shifted.front()->colls.find(t);
      if (it == shifted.front()->colls.end()) return agreeing;
      const auto want = site_of(it->second);
      if (!want) return agreeing;
      for (const auto* o : others) {
        auto jt = o->colls.find(t + k);
        if (jt == o->colls.end()) return agreeing;
        const auto got = site_of(jt->second);
        if (!got || got->file != want->file || got->line != want->line) return 0;
      }
      ++agreeing;
    }
  }

  const RankCalls& of(std::uint32_t rank) const {
    return *std::find_if(ranks_.begin(), ranks_.end(), [&](const RankCalls& r) { return r.rank == rank; });
  }

  std::optional<std::uint32_t> global(std::uint32_t group_rank) const {
    if (group_rank >= pg_.ranks.size()) return std::nullopt;
    return pg_.ranks[group_rank];
  }

  void p2p_findings(std::vector<SequenceFinding>& out) const {
    // (from, to) -> the sends `from` issued, and the receives `to` posted, in order.
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<const FrEntry*>> sends, recvs;
    for (const auto& r : ranks_)
      for (const FrEntry* e : r.entries) {
        if (!e->is_p2p || !e->peer) continue;
        const auto peer = global(*e->peer);
        if (!peer) continue;
        if (e->op == "send") sends[{r.rank, *peer}].push_back(e);
        if (e->op == "recv") recvs[{*peer, r.rank}].push_back(e);
      }
    std::set<std::pair<std::uint32_t, std::uint32_t>> pairs;
    for (const auto& kv : sends) pairs.insert(kv.first);
    for (const auto& kv : recvs) pairs.insert(kv.first);
    for (const auto& [from, to] : pairs) {
      if (!has_dump(from) || !has_dump(to)) continue;
      const auto& s = sends[{from, to}];
      const auto& r = recvs[{from, to}];
      const std::size_t n = std::min(s.size(), r.size());
      for (std::size_t k = 0; k < n; ++k) {
        if (s[k]->in_elements() == r[k]->out_elements() && s[k]->in_dtypes == r[k]->out_dtypes) continue;
        SequenceFinding f;
        f.kind = SequenceFinding::Kind::P2pMismatch;
        f.pg = pg_.id;
        f.seq = static_cast<std::int64_t>(k + 1);
        f.ranks = {from, to};
        f.headline =
            fmt::format("transfer #{} from rank {} to rank {} in process group {}: the send is {}, the receive {}",
                        k + 1, from, to, pg_.id, s[k]->describe(), r[k]->describe());
        out.push_back(std::move(f));
        break;
      }
      if (s.size() == r.size()) continue;
      const bool more_sends = s.size() > r.size();
      const std::uint32_t short_side = more_sends ? to : from;
      if (still_at_transfer_with(of(short_side), more_sends ? from : to)) continue;  // it may post them yet
      SequenceFinding f;
      f.kind = SequenceFinding::Kind::P2pMissing;
      f.pg = pg_.id;
      f.seq = static_cast<std::int64_t>(n + 1);
      f.ranks = {short_side};
      f.headline = fmt::format("rank {} sent {} message{} to rank {}, which posted {} receive{} from it and moved on",
                               from, s.size(), s.size() == 1 ? "" : "s", to, r.size(), r.size() == 1 ? "" : "s");
      out.push_back(std::move(f));
    }
  }

  // Blocked in a send or receive with `peer`: the missing transfer may still come from it. A rank
  // blocked in anything else has moved past the point where the transfer had to be issued.
  bool still_at_transfer_with(const RankCalls& r, std::uint32_t peer) const {
    if (!r.blocked) return false;
    for (auto it = r.entries.rbegin(); it != r.entries.rend(); ++it) {
      const FrEntry* e = *it;
      if (e->completed()) return false;
      if (e->is_p2p && e->peer && global(*e->peer) == peer) return true;
    }
    return false;
  }

  bool has_dump(std::uint32_t rank) const {
    return std::any_of(ranks_.begin(), ranks_.end(), [&](const RankCalls& r) { return r.rank == rank; });
  }

  const FrProcessGroup& pg_;
  std::vector<RankCalls> ranks_;
};

}  // namespace

std::string rank_list(const std::vector<std::uint32_t>& ranks) {
  if (ranks.size() == 1) return fmt::format("rank {}", ranks.front());
  return fmt::format("ranks {}", fmt::join(ranks, ", "));
}

bool is_p2p_batch_marker(const std::vector<FrEntry>& entries, std::size_t i) {
  const FrEntry& m = entries[i];
  if (m.op != "coalesced") return false;
  for (std::size_t j = i; j-- > 0;) {
    if (entries[j].pg != m.pg) continue;
    return entries[j].is_p2p && entries[j].p2p_seq == m.p2p_seq;
  }
  return false;
}

std::vector<SequenceFinding> check_call_sequences(const std::vector<FrDump>& dumps) {
  std::vector<SequenceFinding> out;
  std::set<std::string> seen;
  for (const auto& d : dumps)
    for (const auto& pg : d.pgs)
      if (seen.insert(pg.id).second) PgCheck(pg, dumps).run(out);
  return out;
}

}  // namespace railcheck::triage
