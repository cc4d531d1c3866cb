#include "backends/sim/qp_ops.hpp"

#include "backends/sim/wire.hpp"

namespace railcheck::sim {

void sim_complete(SimWorld& w, std::uint32_t conn, Side side, const CompletionEvent& e) {
  auto& c = w.connections()[conn];
  w.post(c.rank(side), InboxItem{w.now(), 0, conn, side, Event{e}});
}

namespace {
CompletionEvent flush_of(std::uint32_t path, const PostedWr& wr, WcStatus status = WcStatus::WrFlushErr) {
  return CompletionEvent{PathIndex{path}, wr.id, wr.opcode, status, 0, std::nullopt};
}

void flush_all(SimWorld& w, std::uint32_t conn, Side side, std::uint32_t path) {
  SimQp& q = w.connections()[conn].qps(side)[path];
  for (const auto& [psn, wr] : q.outstanding) sim_complete(w, conn, side, flush_of(path, wr));
  q.outstanding.clear();
  for (const auto& wr : q.recv_queue) sim_complete(w, conn, side, flush_of(path, wr));
  q.recv_queue.clear();
}
}  // namespace

void sim_post_send(SimWorld& w, std::uint32_t conn, Side side, std::uint32_t path, const WorkRequest& wr) {
  SimQp& q = w.connections()[conn].qps(side)[path];
  const PostedWr posted = PostedWr::of(wr);
  if (q.state == QpState::Err) return sim_complete(w, conn, side, flush_of(path, posted));
  if (q.state != QpState::Rts) return sim_complete(w, conn, side, flush_of(path, posted, WcStatus::LocQpOpErr));
  const std::uint32_t psn = q.next_psn++;
  q.outstanding.emplace(psn, posted);
  launch_data_packet(w, conn, side, path, psn, q.generation, posted);
}

void sim_post_recv(SimWorld& w, std::uint32_t conn, Side side, std::uint32_t path, const WorkRequest& wr) {
  SimQp& q = w.connections()[conn].qps(side)[path];
  const PostedWr posted = PostedWr::of(wr);
  if (q.state == QpState::Err) return sim_complete(w, conn, side, flush_of(path, posted));
  if (q.state == QpState::Reset) return sim_complete(w, conn, side, flush_of(path, posted, WcStatus::LocQpOpErr));
  q.recv_queue.push_back(posted);
  w.qp_changed(q);  // a sender may be waiting out an RNR NAK
}

void sim_modify_qp(SimWorld& w, std::uint32_t conn, Side side, std::uint32_t path, QpState target) {
  SimQp& q = w.connections()[conn].qps(side)[path];
  switch (target) {
    case QpState::Err:
      if (q.state != QpState::Err) {
        q.state = QpState::Err;
        ++q.generation;
        flush_all(w, conn, side, path);
      }
      break;
    case QpState::Reset:
      q.state = QpState::Reset;
      ++q.generation;
      q.outstanding.clear();
      q.recv_queue.clear();
      q.next_psn = q.next_completion_psn = q.expected_psn = 0;
      break;
    case QpState::Rtr:
      q.state = QpState::Rtr;
      q.expected_psn = 0;
      break;
    case QpState::Rts:
      q.state = QpState::Rts;
      q.next_psn = q.next_completion_psn = 0;
      break;
    default: q.state = target; break;
  }
  w.qp_changed(q);
}

void sim_requester_error(SimWorld& w, std::uint32_t conn, Side side, std::uint32_t path, WcStatus status) {
  SimQp& q = w.connections()[conn].qps(side)[path];
  if (q.state == QpState::Err) return;
  q.state = QpState::Err;
  ++q.generation;
  bool first = true;
  for (const auto& [psn, wr] : q.outstanding) {
    sim_complete(w, conn, side, flush_of(path, wr, first ? status : WcStatus::WrFlushErr));
    first = false;
  }
  q.outstanding.clear();
  for (const auto& wr : q.recv_queue) sim_complete(w, conn, side, flush_of(path, wr));
  q.recv_queue.clear();
  w.qp_changed(q);
}

}  // namespace railcheck::sim
