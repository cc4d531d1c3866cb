// FabricConnection: the libfabric driver of one HaConnection. Its job is rank_driver.cpp's job
// (backends/sim) on real endpoints: execute the engine's actions in order as fi_* calls, and
// turn completions, expired timers and arrived control messages into events. Which WR means
// what, when to fail over and what to replay are the engine's decisions, never made here.
//
// Action -> libfabric (docs/hardware.md has the full table):
//   PostSend        fi_senddata (imm = message sequence number, FI_REMOTE_CQ_DATA)
//   PostRecv        fi_recv (untagged, FI_ORDER_SAS: receives match in posted order like RC)
//   PostWrite       fi_writedata / fi_write
//   ProbeRail       a kernel-answered TCP probe on the rail's address pair (fabric_rail_probes.cpp)
//   ModifyQp        RTR: fi_av_insert of the peer; ERR: stop using the rail and report every
//                   outstanding WR as WR_FLUSH_ERR (posted receives are fi_cancel'ed); later
//                   completions from that rail generation are dropped; RESET: a new generation
//   RegisterMr      fi_mr_reg on the rail's own domain (PdId = rail index)
//   SendControl     fi_tsend with kControlTag on rail 0 (out of band) or on the path's rail
//   ArmTimer        a steady_clock deadline checked in progress()
#include <fmt/format.h>
#include <rdma/fi_errno.h>

#include <algorithm>
#include <cassert>
#include <iterator>

#include "backends/hw/libfabric/control_codec.hpp"
#include "backends/hw/libfabric/fabric_connection_state.hpp"
#include "backends/hw/libfabric/provider_query.hpp"

namespace railcheck {

namespace {

WcStatus status_of(int fi_err) {
  switch (fi_err) {
    case FI_ECANCELED: return WcStatus::WrFlushErr;
    case FI_ETRUNC:
    case FI_EMSGSIZE: return WcStatus::LocLenErr;
    case FI_EACCES:
    case FI_EKEYREJECTED: return WcStatus::RemAccessErr;
    case FI_EINVAL: return WcStatus::LocQpOpErr;
    default: return WcStatus::GeneralErr;  // the path itself broke (reset, unreachable, ...)
  }
}

}  // namespace

Nanos FabricConnection::State::now() const {
  return std::chrono::duration_cast<Nanos>(std::chrono::steady_clock::now() - epoch);
}

// ---- engine I/O ----
void FabricConnection::State::feed(const Event& ev) {
  if (feeding || !deferred.empty()) {
    deferred.push_back(ev);
    drain();
    return;
  }
  feeding = true;
  handle_one(ev);  // no copy: nothing is owed before it
  feeding = false;
  drain();  // what its actions owe the engine
}

void FabricConnection::State::drain() {
  if (feeding) return;
  feeding = true;
  // By index: the actions of one event may append more (their flushes), which come after it.
  for (std::size_t i = 0; i < deferred.size(); ++i) {
    const Event e = std::move(deferred[i]);
    handle_one(e);
  }
  deferred.clear();
  feeding = false;
}

void FabricConnection::State::handle_one(const Event& ev) {
  assert(feeding && "one event at a time: `actions` is the batch being executed");
  actions.clear();
  engine->handle(now(), ev, actions);
  execute(actions);
}

void FabricConnection::State::execute(Actions& actions) {
  for (Action& a : actions) {
    if (auto* p = std::get_if<PostSend>(&a)) {
      post_data(p->path, p->wr, std::nullopt);
    } else if (auto* p = std::get_if<PostRecv>(&a)) {
      post_data(p->path, p->wr, std::nullopt);
    } else if (auto* p = std::get_if<PostWrite>(&a)) {
      post_data(p->path, p->wr, std::make_pair(p->remote_addr, p->rkey));
    } else if (auto* p = std::get_if<ProbeRail>(&a)) {
      probe(*p);
    } else if (auto* m = std::get_if<ModifyQp>(&a)) {
      modify(*m);
    } else if (auto* r = std::get_if<RegisterMr>(&a)) {
      register_on_rail(*r);
    } else if (auto* t = std::get_if<ArmTimer>(&a)) {
      timers[t->timer] = t->deadline;
      next_deadline = std::min(next_deadline, t->deadline);
    } else if (auto* t = std::get_if<CancelTimer>(&a)) {
      timers.erase(t->timer);
    } else if (auto* s = std::get_if<SendControl>(&a)) {
      send_control(s->channel, s->message);
    } else if (auto* r = std::get_if<CompleteRequest>(&a)) {
      if (staged.completed(r->request) == fabric::StagedSends::Outcome::AlreadyReported) {
        // The user heard "done" at the local completion; a failure now is the connection's.
        if (r->outcome != RequestOutcome::Done) staged_send_lost = true;
        continue;
      }
      RequestResult res;
      res.ok = r->outcome == RequestOutcome::Done;
      res.sizes.assign(r->sizes.begin(), r->sizes.end());
      if (r->error) res.error = r->error->message();
      results[r->request] = std::move(res);
    } else if (auto* f = std::get_if<ConnectionFailed>(&a)) {
      (void)f;
    } else if (auto* t = std::get_if<Trace>(&a)) {
      if (t->note.kind == TraceKind::Replayed) replayed += t->note.count;
      if (t->note.kind == TraceKind::StandbyReady) warm_standby(t->note.path);
      if (t->note.kind == TraceKind::FailoverStarted) ++failovers_started;
      if (t->note.kind == TraceKind::FailoverStarted && !first_failover_at) {
        first_failover_at = std::chrono::steady_clock::now();
        first_failover_why = t->note.detail;
      }
      if (trace_to_stderr)
        fmt::print(stderr, "[railcheck fabric {} {:.3f} ms] {} path {} count {} {}\n",
                   engine->role() == ConnRole::Sender ? "send" : "recv", to_millis(now()), to_string(t->note.kind),
                   t->note.path.value, t->note.count, t->note.detail);
    }
  }
}

// ---- posting ----
Op* FabricConnection::State::new_op(OpKind kind, std::uint32_t rail) {
  Op* op = ops.acquire();
  op->fi = {};
  op->kind = kind;
  op->rail = rail;
  op->generation = rails[rail].generation;
  op->posted = false;
  op->stale = false;
  op->wr = {};
  op->opcode = WrOpcode::Send;
  op->addr = 0;
  op->length = 0;
  op->bytes.clear();  // a recycled control buffer keeps its capacity
  return op;
}

void FabricConnection::State::drop_op(Op* op) { ops.release(op); }

void FabricConnection::State::owe_completion(PathIndex path, const WorkRequest& wr, WcStatus st) {
  deferred.push_back(CompletionEvent{path, wr.id, wr.opcode, st, 0, std::nullopt});
}

void FabricConnection::State::post_data(PathIndex path, const WorkRequest& wr,
                                        std::optional<std::pair<std::uint64_t, std::uint32_t>> rma) {
  RailSlot& slot = rails.at(path.value);
  if (slot.cut || slot.err || !slot.rail->has_peer()) {
    // A QP in ERR flushes what is posted to it; a dead link never completes it normally.
    owe_completion(path, wr, slot.cut ? WcStatus::RetryExcErr : WcStatus::WrFlushErr);
    return;
  }
  // One SGE per WR (the engine posts one buffer per WR); its MR resolved on this rail's domain.
  void* buf = nullptr;
  std::uint32_t len = 0;
  void* desc = nullptr;
  if (!wr.sges.empty()) {
    const Sge& sge = wr.sges.front();
    buf = reinterpret_cast<void*>(sge.addr);
    len = sge.length;
    auto it = mr_by_id.find(sge.mr);
    if (it != mr_by_id.end() && it->second->per_rail.at(path.value)) desc = it->second->per_rail[path.value]->desc;
  }
  Op* op = new_op(OpKind::Data, path.value);
  op->wr = wr.id;
  op->opcode = wr.opcode;
  op->addr = reinterpret_cast<std::uint64_t>(buf);
  op->length = len;
  slot.outstanding.emplace(wr.id, op);
  FabricRail* rail = slot.rail.get();
  const std::optional<std::uint32_t> imm = wr.imm;
  // A send's immediate is its message sequence number: the receiver's acknowledgements name it.
  const bool needs_ack = delivery_acks && wr.opcode == WrOpcode::Send && imm.has_value();
  slot.order.posted(wr.id, wr.opcode, needs_ack ? imm : std::nullopt);
  auto on_error = [this, path, op](ssize_t) {
    // The provider refused the post outright: report it as the path's failure.
    RailSlot& s = rails[path.value];
    s.outstanding.erase(op->wr);
    s.order.forget(op->wr);
    deferred.push_back(CompletionEvent{path, op->wr, op->opcode, WcStatus::GeneralErr, 0, std::nullopt});
    drop_op(op);
  };
  if (wr.opcode == WrOpcode::Recv) {
    ++slot.stats.posted_recvs;
    slot.pending.submit(
        [rail, buf, len, desc, op] {
          const ssize_t rc = rail->recv(buf, len, desc, op);
          op->posted = rc == 0;
          return rc;
        },
        on_error);
  } else if (rma) {
    ++slot.stats.posted_writes;
    // Named copies, not a structured binding: lambdas capture bindings only from C++20 (and
    // clang before 16 refuses it), and the fuzz/sanitizer tree builds with clang-14.
    const auto addr = rma->first;
    const auto key = rma->second;
    slot.pending.submit(
        [rail, buf, len, desc, imm, addr, key, op] {
          const ssize_t rc = rail->write(buf, len, desc, imm, addr, key, op);
          op->posted = rc == 0;
          return rc;
        },
        on_error);
  } else {
    ++slot.stats.posted_sends;
    slot.pending.submit(
        [rail, buf, len, desc, imm, op] {
          const ssize_t rc = rail->send(buf, len, desc, imm, op);
          op->posted = rc == 0;
          return rc;
        },
        on_error);
  }
}

void FabricConnection::State::post_control_recv(std::uint32_t r, Op* reuse) {
  RailSlot& slot = rails[r];
  Op* op = reuse;
  if (op == nullptr) {
    op = new_op(OpKind::ControlRecv, r);
    op->bytes.resize(fabric::kControlMaxBytes + auth::kSealTrailerBytes);
  } else {
    op->generation = slot.generation;
  }
  FabricRail* rail = slot.rail.get();
  slot.pending.submit(
      [rail, op] {
        const ssize_t rc = rail->trecv(op->bytes.data(), op->bytes.size(), nullptr, op);
        op->posted = rc == 0;
        return rc;
      },
      [this, op](ssize_t) { drop_op(op); });
}

void FabricConnection::State::start_sealing(std::span<const std::uint8_t> handle, bool connecting) {
  if (!options.key) return;
  seal.emplace(*options.key, "railcheck control v1", std::vector<std::uint8_t>(handle.begin(), handle.end()),
               connecting ? 0U : 1U, connecting ? 1U : 0U);
}

void FabricConnection::State::send_control(const ControlChannel& ch, const ControlMessage& m) {
  const std::uint32_t r = ch.out_of_band ? 0 : ch.path.value;
  RailSlot& slot = rails.at(r);
  // A message to a dead link or to a peer we have no address for is lost, as it would be on
  // the wire; the engine's timers cover lost control messages.
  if (slot.cut || !slot.rail->has_peer()) return;
  auto bytes = fabric::encode_control(ch.out_of_band, m);
  if (!bytes) return;
  send_control_bytes(r, std::move(bytes).value(), ch.out_of_band);
}

void FabricConnection::State::send_control_bytes(std::uint32_t r, std::vector<std::uint8_t> bytes, bool oob) {
  RailSlot& slot = rails.at(r);
  Op* op = new_op(OpKind::ControlSend, r);
  if (seal) seal->seal(bytes);
  op->bytes = std::move(bytes);
  ++slot.stats.control_sent;
  FabricRail* rail = slot.rail.get();
  slot.pending.submit(
      [rail, op] {
        const ssize_t rc = rail->tsend(op->bytes.data(), op->bytes.size(), nullptr, op);
        op->posted = rc == 0;
        return rc;
      },
      [this, op, oob](ssize_t) {
        if (oob && !engine->comm_ready()) handshake_failed = true;
        drop_op(op);
      });
}

// ---- QP state ----
void FabricConnection::State::modify(const ModifyQp& m) {
  RailSlot& slot = rails.at(m.path.value);
  switch (m.target) {
    case QpState::Reset:
      // Revival: a fresh generation; nothing posted before it can complete into it.
      slot.err = false;
      ++slot.generation;
      break;
    case QpState::Rtr:
      if (m.remote && !slot.cut) {
        if (auto ok = slot.rail->insert_peer(*m.remote); !ok) {
          slot.err = true;  // posts to it flush; the engine sees errors and decides
        }
        learn_probe_peer(m.path, *m.remote);
      }
      break;
    case QpState::Err: flush(m.path); break;
    default: break;  // INIT, RTS, SQD, SQE: nothing to do on an RDM endpoint
  }
}

void FabricConnection::State::flush(PathIndex path) {
  RailSlot& slot = rails.at(path.value);
  slot.err = true;
  ++slot.generation;
  slot.stats.flushed += slot.outstanding.size();
  if (probes) probes->forget(path.value, false);
  flush_in_order(slot, path, WcStatus::WrFlushErr);
  for (auto& [wr, op] : slot.outstanding) {
    op->stale = true;
    if (!op->posted) {
      drop_op(op);
    } else if (!slot.cut && op->opcode == WrOpcode::Recv) {
      slot.rail->cancel(op);
    }
  }
  slot.outstanding.clear();
  // Anything still waiting for the provider was in `outstanding` and is now reported.
  slot.pending.clear();
  slot.write_room = SIZE_MAX;
}

void FabricConnection::State::register_on_rail(const RegisterMr& r) {
  auto it = mr_by_id.find(r.mr);
  if (it == mr_by_id.end()) return;
  MemoryRegion& m = *it->second;
  const std::uint32_t rail = r.pd.value;
  if (rail >= rails.size() || rails[rail].cut || m.per_rail.at(rail) || m.len == 0) return;
  auto reg = rails[rail].rail->register_memory(m.addr, m.len);
  if (!reg) {
    registration_error = reg.error();
    return;
  }
  m.per_rail[rail] = std::move(reg).value();
}

// ---- completions ----
void FabricConnection::State::on_completion(std::uint32_t r, const RailCompletion& c) {
  Op* op = ops.find(c.context);
  if (op == nullptr) return;  // a remote write's CQ data: no local operation (not used by HA)
  op->posted = false;
  RailSlot& slot = rails[r];
  if (op->kind == OpKind::ControlSend) {
    if (c.error != 0 && !engine->comm_ready() && op->rail == 0) handshake_failed = true;
    drop_op(op);
    return;
  }
  if (op->kind == OpKind::ControlRecv) {
    std::span<const std::uint8_t> bytes(op->bytes.data(), c.len);
    bool authentic = true;
    if (c.error == 0 && !slot.cut && seal) {
      // Anyone who can reach this rail's endpoint can send it a tagged message: only what
      // verifies under the job key, for this connection, from the peer, once, goes further.
      const auth::Unsealed u = seal->open(bytes);
      authentic = u.ok;
      if (u.ok) {
        bytes = u.message;
      } else if (control_refused++ == 0) {
        first_control_refusal = fmt::format("rail {}: {}: {}", r, auth::name(u.refusal), u.detail);
      }
    }
    if (c.error == 0 && !slot.cut && authentic) {
      auto decoded = fabric::decode_control(bytes);
      if (decoded && decoded->delivery_ack) {
        on_delivery_ack(*decoded->delivery_ack);
      } else if (decoded) {
        const ControlChannel ch = decoded->out_of_band ? ControlChannel::oob() : ControlChannel::on(PathIndex{r});
        feed(ControlReceived{ch, std::move(*decoded->message)});
      }
    }
    // The same buffer goes back to the provider: a fresh one per control message allocated and
    // zeroed 64 KiB, a third of a small two-sided message's instructions (docs/benchmarks.md,
    // "Where a small message's time goes").
    if (!slot.cut && c.error != FI_ECANCELED) {
      post_control_recv(r, op);
    } else {
      drop_op(op);
    }
    return;
  }
  if (op->stale || op->generation != slot.generation) {
    drop_op(op);  // flushed already: the engine heard about it once
    return;
  }
  slot.outstanding.erase(op->wr);
  ++slot.stats.completions;
  CompletionEvent ev{PathIndex{r}, op->wr, op->opcode, WcStatus::Success, op->length, std::nullopt};
  if (c.error != 0) {
    ev.status = status_of(c.error);
    ev.byte_len = 0;
  } else if (op->opcode == WrOpcode::Send) {
    // A staged send's bytes have left: the user may reuse its buffer (the copy stays for a
    // replay until the delivery ack completes the request in the engine; staged_sends.hpp).
    if (auto request = staged.sent_locally(op->addr)) {
      results[*request] = RequestResult{true, {op->length}, {}};
      ++staged_early;
    }
  } else if (op->opcode == WrOpcode::Recv) {
    ev.byte_len = static_cast<std::uint32_t>(c.len);
    ack_clock.landed(c.len);
    if ((c.flags & FI_REMOTE_CQ_DATA) != 0) {
      ev.imm = static_cast<std::uint32_t>(c.data);
      if ((c.data & fabric::kZeroLengthFlag) != 0) ev.byte_len = 0;
    }
  }
  drop_op(op);
  slot.order.landed(ev);
  release(slot);
  drain();
}

void FabricConnection::State::release(RailSlot& slot) {
  released.clear();
  slot.order.release(released);
  deferred.insert(deferred.end(), released.begin(), released.end());
}

void FabricConnection::State::flush_in_order(RailSlot& slot, PathIndex path, WcStatus first_status) {
  released.clear();
  slot.order.fail(path, first_status, released);
  deferred.insert(deferred.end(), released.begin(), released.end());
}

void FabricConnection::State::on_delivery_ack(const fabric::DeliveryAck& a) {
  if (!delivery_acks || engine->role() != ConnRole::Sender) return;
  for (RailSlot& slot : rails) {
    slot.order.acknowledged(a.next);
    release(slot);
  }
  drain();
}

void FabricConnection::State::acknowledge_delivery() {
  if (!delivery_acks || engine->role() != ConnRole::Receiver || engine->failed()) return;
  const std::uint64_t delivered = engine->delivered();
  if (!ack_clock.due(delivered - ack_sent, now())) return;
  const std::uint32_t r = engine->active_path().value;
  RailSlot& slot = rails.at(r);
  if (slot.cut || slot.err || !slot.rail->has_peer()) return;  // the next progress() tries again
  send_control_bytes(r, fabric::encode_delivery_ack(fabric::DeliveryAck{delivered}), false);
  ack_sent = delivered;
  ack_clock.sent();
}

// ---- polling and timers ----
// A rail with no data WR of ours that the engine has not yet heard complete (in the provider, or
// landed and held in RC order: a send waiting for its delivery ack), no write or queued post in
// flight, no memory a peer may write into, and whose last poll found nothing, is read every
// kIdlePollEvery progress() calls, and at least once per tick of the coarse clock (every few
// milliseconds however rarely progress() is called): what can still arrive there (a peer's
// control message: a heartbeat, a resync) waits at most that long, far under the heartbeat and
// failover timeouts, and the rail that carries the traffic is not slowed by CQ reads of its
// standby. Issue 32, measured on a quiet 16-core Xeon: reading the standby every 4th call cost
// 64 B shm writes a fifth of their rate (an empty shm CQ read runs the provider's progress over
// its shared queues; engine/plain 0.73 with two rails, 1.00 with one).
constexpr std::uint32_t kIdlePollEvery = 1024;

// Posts the provider refused (-FI_EAGAIN) wait in the rail's queue, and a retry goes on until the
// provider refuses again: on shm, whose peer command queue is shorter than a 64-write window,
// that last refused fi_writedata (~380 instructions) came once per progress() call, 0.9 per 64 B
// write (issue 32). So the room is learned from the refusals: a refused write records how many
// writes the provider held (RailSlot::write_room), and a retry posts at most as many as fit
// below it. Every kRoomProbeEvery-th retry that filled it exactly tries one more, so room that
// grew is found; a refusal sets it back. A queue held back entirely (no room left) is still
// retried every kGatedRetryEvery-th call, one post, so a refusal for another reason never holds
// a post for long; a retry that empties the queue forgets the room.
constexpr std::uint32_t kGatedRetryEvery = 16;
constexpr std::uint32_t kRoomProbeEvery = 64;

void FabricConnection::State::poll_rails(Nanos coarse_now) {
  const std::size_t want = std::max<std::size_t>(1, options.tunables.poll_batch);
  if (batch.size() != want) batch.resize(want);
  for (std::uint32_t r = 0; r < rails.size(); ++r) {
    RailSlot& slot = rails[r];
    if (slot.cut) continue;
    // `order`, not `outstanding`: a send whose provider completion was read waits there for its
    // delivery ack, which arrives on this rail. Counted idle, the sender read the ack on the
    // 1024th progress() after: 0.3-0.4 ms per small message under NCCL's proxy, which tests the
    // send in a loop (issue 42, docs/nccl-plugin.md). `order` holds every WR `outstanding` does.
    const bool busy =
        !slot.order.empty() || slot.writes_in_flight > 0 || !slot.pending.empty() || slot.writable_by_peer;
    if (!busy && !slot.hot && ++slot.idle_polls_skipped < kIdlePollEvery && coarse_now <= slot.last_idle_poll) continue;
    slot.idle_polls_skipped = 0;
    slot.last_idle_poll = coarse_now;
    slot.hot = false;
    // Bounded: a flood of completions cannot keep one progress() call forever. A short read
    // means the CQ was drained: reading it again now would be an empty read (a third of the
    // CQ reads per 64 B write on shm).
    for (int round = 0; round < 4; ++round) {
      auto n = slot.rail->poll(batch);
      if (!n || n.value() == 0) break;
      slot.hot = true;
      for (std::size_t i = 0; i < n.value(); ++i)
        if (!on_write_event(batch[i])) on_completion(r, batch[i]);
      if (n.value() < batch.size()) break;
    }
    if (!slot.pending.empty()) retry_pending(slot);
  }
}

void FabricConnection::State::retry_pending(RailSlot& slot) {
  std::size_t limit = SIZE_MAX;  // no refused write: retry until the provider refuses
  if (slot.write_room != SIZE_MAX) {
    if (slot.writes_posted < slot.write_room) {
      limit = slot.write_room - slot.writes_posted;
      if (++slot.room_fills >= kRoomProbeEvery) {
        slot.room_fills = 0;
        ++limit;  // probe: the room may have grown
      }
    } else if (++slot.gated_retries >= kGatedRetryEvery) {
      slot.gated_retries = 0;
      limit = 1;
    } else {
      return;
    }
  }
  if (slot.pending.retry(limit) == 0) slot.write_room = SIZE_MAX;
}

void FabricConnection::State::fire_timers(Nanos coarse_now) {
  // The precise clock only once a timer may be due (coarse_clock.hpp).
  if (timers.empty() || coarse_now + coarse.tick() < next_deadline) return;
  const Nanos t = now();
  if (t < next_deadline) return;
  while (!timers.empty()) {
    auto due = std::min_element(timers.begin(), timers.end(),
                                [](const auto& a, const auto& b) { return a.second < b.second; });
    if (due->second > t) {
      next_deadline = due->second;
      return;
    }
    const TimerId id = due->first;
    timers.erase(due);
    feed(TimerFired{id});
  }
  next_deadline = Nanos::max();
}

// ---- fault injection ----
void FabricConnection::State::cut(PathIndex path) {
  if (path.value >= rails.size() || rails[path.value].cut) return;
  RailSlot& slot = rails[path.value];
  slot.cut = true;
  slot.stats.cut = true;
  if (probes) probes->forget(path.value, true);
  slot.pending.clear();
  slot.write_room = SIZE_MAX;
  // As on an RC QP whose link died: the oldest WR fails with RETRY_EXC_ERR, the rest flush.
  flush_in_order(slot, path, WcStatus::RetryExcErr);
  slot.outstanding.clear();
  // The rail is silenced, not closed: never posted to or polled again, closed with the
  // connection (~State), as a dead link sends its peer no FIN or RST. Closing it mid-stream broke
  // the peer's provider (issue 33): ofi_rxm 1.17 keeps messages that arrived before a matching
  // receive in an endpoint-wide queue tied to their connection, and does not purge that queue
  // when the connection closes; the peer's next receive on the rail (posted before our failover
  // notice reached it) matched one and dereferenced the dropped connection (SIGSEGV in
  // libfabric, or heap corruption). shm crashed the same way in fi_cq_read when a peer endpoint
  // in the same process closed. tests/backends/hw/libfabric/cut_lifetime_test.cpp.
  // The ops the provider still holds stay in `ops` until then, so no context it may report is
  // freed under it.
}

}  // namespace railcheck
