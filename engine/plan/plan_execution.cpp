// Device-side execution of every rank's plans (plan_execution.hpp). Work-list driven: a
// (rank, channel) is examined again only when its head item or a peer's changed, so a run
// costs about the number of items times the ranks a collective spans.
#include "engine/plan/plan_execution.hpp"

#include <fmt/format.h>

#include <deque>
#include <unordered_map>

namespace railcheck::plan {
namespace {

class Execution {
 public:
  explicit Execution(const std::vector<RankSchedule>& ranks) : ranks_(ranks), cursors_(ranks.size()) {
    for (std::uint32_t r = 0; r < ranks_.size(); ++r) enter_plan(r, 0);
  }

  ExecutionReport run() {
    while (!work_.empty()) {
      const auto [r, c] = work_.front();
      work_.pop_front();
      examine(r, c);
    }
    ExecutionReport report;
    report.items_done = items_done_;
    std::vector<WaitEdge> edges;
    for (std::uint32_t r = 0; r < ranks_.size(); ++r) {
      if (finished(r)) continue;
      report.stuck_ranks.push_back(r);
      for (std::uint32_t c = 0; c < cursors_[r].pos.size(); ++c) add_waits(r, c, edges);
    }
    report.completed = report.stuck_ranks.empty();
    if (!report.completed) report.hang = find_hang(static_cast<std::uint32_t>(ranks_.size()), edges);
    return report;
  }

 private:
  struct Cursor {
    std::uint32_t plan = 0;
    std::vector<std::uint32_t> pos;  // next item per channel
    std::vector<char> arrived;       // the head collective has been counted in arrivals_
    std::vector<char> send_done;     // halves of the head p2p item
    std::vector<char> recv_done;
    std::uint64_t left = 0;  // items left in the current plan
  };

  bool finished(std::uint32_t r) const { return cursors_[r].plan >= ranks_[r].plans.size(); }

  const WorkItem* head(std::uint32_t r, std::uint32_t c) const {
    if (finished(r)) return nullptr;
    const auto& channels = ranks_[r].plans[cursors_[r].plan].channels;
    if (c >= channels.size() || cursors_[r].pos[c] >= channels[c].work.size()) return nullptr;
    return &channels[c].work[cursors_[r].pos[c]];
  }

  void enter_plan(std::uint32_t r, std::uint32_t plan) {
    Cursor& cur = cursors_[r];
    cur.plan = plan;
    // Empty plans never exist (the scheduler refuses them), so `left` is positive here.
    if (finished(r)) return;
    const auto& p = ranks_[r].plans[plan];
    cur.pos.assign(p.channels.size(), 0);
    cur.arrived.assign(p.channels.size(), 0);
    cur.send_done.assign(p.channels.size(), 0);
    cur.recv_done.assign(p.channels.size(), 0);
    cur.left = p.work_items;
    for (std::uint32_t c = 0; c < p.channels.size(); ++c)
      if (!p.channels[c].work.empty()) work_.emplace_back(r, c);
  }

  void pop(std::uint32_t r, std::uint32_t c) {
    Cursor& cur = cursors_[r];
    ++cur.pos[c];
    cur.arrived[c] = cur.send_done[c] = cur.recv_done[c] = 0;
    ++items_done_;
    if (--cur.left == 0) {
      enter_plan(r, cur.plan + 1);
      return;
    }
    work_.emplace_back(r, c);
  }

  static std::uint64_t coll_key(std::uint32_t c, std::uint32_t seq) { return (std::uint64_t{seq} << 8) | c; }

  void examine(std::uint32_t r, std::uint32_t c) {
    const WorkItem* h = head(r, c);
    if (h == nullptr) return;
    Cursor& cur = cursors_[r];
    if (h->kind == WorkItem::Kind::Coll) {
      if (cur.arrived[c]) return;
      cur.arrived[c] = 1;
      const auto key = coll_key(c, h->coll_seq);
      if (++arrivals_[key] < ranks_.size()) return;
      arrivals_.erase(key);
      for (std::uint32_t s = 0; s < ranks_.size(); ++s) pop(s, c);
      return;
    }
    match_half(r, c, *h, /*sending=*/true);
    match_half(r, c, *h, /*sending=*/false);
    const bool send_ok = !h->send.present || cur.send_done[c];
    const bool recv_ok = !h->recv.present || cur.recv_done[c];
    if (send_ok && recv_ok) pop(r, c);
  }

  // The peer's head on the same channel must hold the opposite half of the same transfer, or
  // (a receive) the sender's data must wait in the connection's buffer, or (a send) it must fit
  // there: a send kernel runs ahead of its receiver by the connection's NCCL_STEPS slots, so a
  // part no larger than that completes alone (P2pHalf::buffer_bytes). Recorded on 2xH200, NCCL
  // 2.28.9: a 64 MiB send cycle between two ranks completes (32 channels x 4 MiB of buffer),
  // the same cycle among four ranks with 2 channels per peer hangs (scenarios/triage).
  void match_half(std::uint32_t r, std::uint32_t c, const WorkItem& h, bool sending) {
    const P2pHalf& mine = sending ? h.send : h.recv;
    auto& my_done = sending ? cursors_[r].send_done : cursors_[r].recv_done;
    if (!mine.present || my_done[c]) return;
    auto& queued = buffered_[conn_key(sending ? r : mine.peer, sending ? mine.peer : r, c)];
    if (!sending && !queued.parts.empty()) {
      const P2pHalf& first = queued.parts.front();
      if (first.bytes != mine.bytes || first.part != mine.part) return;  // a mismatch: never drains
      queued.bytes -= first.bytes;
      queued.parts.pop_front();
      my_done[c] = 1;
      return;
    }
    if (sending && !queued.parts.empty()) {
      buffer_send(r, c, mine, queued, my_done);
      return;
    }
    const WorkItem* other = head(mine.peer, c);
    if (other == nullptr || other->kind != WorkItem::Kind::P2p) {
      if (sending) buffer_send(r, c, mine, queued, my_done);
      return;
    }
    const P2pHalf& theirs = sending ? other->recv : other->send;
    auto& their_done = sending ? cursors_[mine.peer].recv_done : cursors_[mine.peer].send_done;
    if (!theirs.present || their_done[c] || theirs.peer != r || theirs.bytes != mine.bytes ||
        theirs.part != mine.part) {
      if (sending) buffer_send(r, c, mine, queued, my_done);
      return;
    }
    my_done[c] = 1;
    their_done[c] = 1;
    if (mine.peer != r) work_.emplace_back(mine.peer, c);
  }

  struct Buffered {
    std::deque<P2pHalf> parts;  // sent, not yet received, oldest first
    std::uint64_t bytes = 0;
  };

  static std::uint64_t conn_key(std::uint32_t from, std::uint32_t to, std::uint32_t c) {
    return (std::uint64_t{from} << 40) | (std::uint64_t{to} << 8) | c;
  }

  void buffer_send(std::uint32_t r, std::uint32_t c, const P2pHalf& mine, Buffered& queued, std::vector<char>& done) {
    if (mine.peer == r || queued.bytes + mine.bytes > mine.buffer_bytes) return;
    queued.parts.push_back(mine);
    queued.bytes += mine.bytes;
    done[c] = 1;
    work_.emplace_back(mine.peer, c);  // its receive, if already waiting, can now drain it
  }

  std::string describe(std::uint32_t r, const WorkItem& w) const {
    if (w.kind == WorkItem::Kind::Coll) {
      const auto& t = ranks_[r].colls[w.coll_seq].task;
      return fmt::format("{} #{} (count {} {}, share {})", name(t.op), w.coll_seq, t.count, name(t.dtype), w.bid);
    }
    std::string out = "p2p";
    if (w.send.present) out += fmt::format(" send {} B to rank {}", w.send.bytes, w.send.peer);
    if (w.recv.present)
      out += fmt::format("{} recv {} B from rank {}", w.send.present ? "," : "", w.recv.bytes, w.recv.peer);
    return out;
  }

  std::string holder_state(std::uint32_t s, std::uint32_t c) const {
    if (finished(s)) return "has finished all its kernels";
    if (const WorkItem* h = head(s, c)) return fmt::format("is at {} on that channel", describe(s, *h));
    return fmt::format("has no more work on channel {} in its plan {}", c, cursors_[s].plan);
  }

  void add_wait(std::uint32_t r, std::uint32_t c, const WorkItem& h, std::uint32_t s,
                std::vector<WaitEdge>& edges) const {
    edges.push_back(WaitEdge{r, s, c, describe(r, h), holder_state(s, c), finished(s)});
  }

  void add_waits(std::uint32_t r, std::uint32_t c, std::vector<WaitEdge>& edges) const {
    const WorkItem* h = head(r, c);
    if (h == nullptr) return;
    if (h->kind == WorkItem::Kind::Coll) {
      // One edge, to the first rank not at this collective: every waiting rank keeps an
      // out-edge, so following them ends in a cycle or at a rank that waits for nothing, and
      // 1024 ranks do not make a million edges.
      for (std::uint32_t s = 0; s < ranks_.size(); ++s) {
        const WorkItem* o = head(s, c);
        if (o == nullptr || o->kind != WorkItem::Kind::Coll || o->coll_seq != h->coll_seq) {
          add_wait(r, c, *h, s, edges);
          return;
        }
      }
      return;
    }
    if (h->send.present && !cursors_[r].send_done[c]) add_wait(r, c, *h, h->send.peer, edges);
    if (h->recv.present && !cursors_[r].recv_done[c]) add_wait(r, c, *h, h->recv.peer, edges);
  }

  const std::vector<RankSchedule>& ranks_;
  std::vector<Cursor> cursors_;
  std::deque<std::pair<std::uint32_t, std::uint32_t>> work_;
  std::unordered_map<std::uint64_t, std::size_t> arrivals_;
  std::unordered_map<std::uint64_t, Buffered> buffered_;  // per (sender, receiver, channel)
  std::uint64_t items_done_ = 0;
};

}  // namespace

ExecutionReport execute_plans(const std::vector<RankSchedule>& ranks) { return Execution(ranks).run(); }

}  // namespace railcheck::plan
