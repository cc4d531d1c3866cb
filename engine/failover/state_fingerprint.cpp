// State fingerprints of an HA connection for the model checker (verify/). Every member that can
// change after construction is fed here, in declaration order; a member added to HaConnection
// without a line here makes the checker merge states that differ, so keep the two in step
// (tests/verify/fingerprint_test.cpp checks that each observable change moves the hash).
#include "engine/failover/ha_connection.hpp"

namespace railcheck {
namespace {

void hash_endpoint(StateHasher& h, const QpEndpoint& e) {
  h.add(e.qpn);
  h.add(e.lid);
  h.add(e.psn);
}

void hash_wr(StateHasher& h, const WorkRequest& wr) {
  h.add(wr.id);
  h.add(wr.opcode);
  h.add(wr.sges.size());
  for (const auto& s : wr.sges) {
    h.add(s.addr);
    h.add(s.length);
    h.add(s.mr);
  }
  h.add(wr.tags.size());
  for (const auto t : wr.tags) h.add(t);
  h.add(wr.imm);
}

}  // namespace

void InflightTable::hash_state(StateHasher& h) const {
  h.add(size());
  for (const auto& e : entries()) {
    h.add(e.request);
    h.add(e.part);
    hash_wr(h, e.wr);
    h.add(e.seq);
    h.add(e.post_time);
    h.add(e.posted_on);
    h.add(e.has_success_cqe);
    h.add(e.byte_len);
  }
}

void HaConnection::hash_state(StateHasher& h, IdCounters counters) const {
  h.add(role_);
  h.add(paths_.size());
  for (const auto& p : paths_) {
    h.add(p.remote.has_value());
    if (p.remote) hash_endpoint(h, *p.remote);
    h.add(p.qp);
    h.add(p.health);
    h.add(p.missed_pings);
    h.add(p.ping_outstanding);
    h.add(p.failed_at);
  }
  h.add(active_);
  h.add(comm_ready_);
  h.add(peer_is_ha_);
  table_.hash_state(h);
  h.add(next_seq_);
  h.add(delivered_);
  h.add(record_low_);
  h.add(record_.size());
  for (const auto s : record_) h.add(s);
  h.add(mrs_.size());
  for (const auto& [id, m] : mrs_) {
    h.add(id);
    h.add(m.addr);
    h.add(m.length);
  }
  h.add(registered_.size());
  for (const auto& [pd, mr] : registered_) {
    h.add(pd);
    h.add(mr);
  }
  if (counters == IdCounters::Hash) {
    h.add(wr_counter_);
    h.add(timer_counter_);
    h.add(ping_counter_);
  }
  h.add(phase_);
  h.add(epoch_);
  h.add(failing_);
  h.add(next_);
  h.add(peer_initiated_);
  h.add(reply_watermark_);
  h.add(mrs_registered_in_failover_);
  rto_.hash_state(h);
  liveness_.hash_state(h, counters);
  h.add(liveness_timer_);
  h.add(rto_timer_);
  h.add(heartbeat_timer_);
  h.add(control_timer_);
  h.add(probe_timer_);
}

}  // namespace railcheck
