#include "backends/hw/libfabric/rc_completion_order.hpp"

namespace railcheck::fabric {

void RcCompletionOrder::posted(WrId wr, WrOpcode opcode, std::optional<std::uint32_t> ack_seq) {
  entries_[wr] = Entry{opcode, ack_seq, std::nullopt};
}

void RcCompletionOrder::landed(const CompletionEvent& ev) {
  auto it = entries_.find(ev.wr);
  if (it == entries_.end() || it->second.landed) return;
  it->second.landed = ev;
}

void RcCompletionOrder::acknowledged(std::uint64_t next) {
  const auto n = static_cast<std::uint32_t>(next);
  // Serial arithmetic: an acknowledgement older than the one we hold (reordered across rails)
  // must not move the mark back.
  if (acked_next_ && static_cast<std::int32_t>(n - *acked_next_) <= 0) return;
  acked_next_ = n;
}

void RcCompletionOrder::forget(WrId wr) { entries_.erase(wr); }

bool RcCompletionOrder::acked(std::uint32_t seq) const {
  return acked_next_ && static_cast<std::int32_t>(seq - *acked_next_) < 0;
}

// Landed, and (a success that needs one) acknowledged. After an error nothing waits for an
// acknowledgement: it flushes.
bool RcCompletionOrder::due(const Entry& e) const {
  if (!e.landed) return false;
  if (qp_error_ || e.landed->status != WcStatus::Success || !e.ack_seq) return true;
  return acked(*e.ack_seq);
}

std::size_t RcCompletionOrder::awaiting_ack() const {
  std::size_t n = 0;
  for (const auto& [wr, e] : entries_)
    if (e.landed && e.landed->status == WcStatus::Success && e.ack_seq && !acked(*e.ack_seq)) ++n;
  return n;
}

void RcCompletionOrder::release(std::vector<CompletionEvent>& out) {
  bool blocked[2] = {false, false};
  for (auto it = entries_.begin(); it != entries_.end();) {
    const int q = queue_of(it->second.opcode);
    if (blocked[q] || !due(it->second)) {
      blocked[q] = true;
      ++it;
      continue;
    }
    CompletionEvent ev = *it->second.landed;
    if (qp_error_) {
      ev.status = WcStatus::WrFlushErr;
      ev.byte_len = 0;
      ev.imm.reset();
    } else if (ev.status != WcStatus::Success) {
      qp_error_ = true;
    }
    out.push_back(ev);
    it = entries_.erase(it);
  }
}

void RcCompletionOrder::fail(PathIndex path, WcStatus first_status, std::vector<CompletionEvent>& out) {
  bool hole[2] = {false, false};
  bool first = true;
  for (const auto& [wr, e] : entries_) {
    const int q = queue_of(e.opcode);
    if (!hole[q] && due(e) && !qp_error_) {
      out.push_back(*e.landed);
      if (e.landed->status != WcStatus::Success) qp_error_ = true;
      continue;
    }
    hole[q] = true;
    out.push_back(CompletionEvent{path, wr, e.opcode, first ? first_status : WcStatus::WrFlushErr, 0, std::nullopt});
    first = false;
  }
  entries_.clear();
  qp_error_ = false;  // the next generation of this rail starts clean
}

}  // namespace railcheck::fabric
