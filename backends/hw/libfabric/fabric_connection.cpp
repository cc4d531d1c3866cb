// FabricConnection: the libfabric driver of one HaConnection. Its job is rank_driver.cpp's job
// (backends/sim) on real endpoints: execute the engine's actions in order as fi_* calls, and
// turn completions, expired timers and arrived control messages into events. Which WR means
// what, when to fail over and what to replay are the engine's decisions, never made here.
//
// Action -> libfabric (docs/hardware.md has the full table):
//   PostSend        fi_senddata (imm = message sequence number, FI_REMOTE_CQ_DATA)
//   PostRecv        fi_recv (untagged, FI_ORDER_SAS: receives match in posted order like RC)
//   PostWrite       fi_writedata / fi_write
//   ModifyQp        RTR: fi_av_insert of the peer; ERR: stop using the rail and report every
//                   outstanding WR as WR_FLUSH_ERR (posted receives are fi_cancel'ed); later
//                   completions from that rail generation are dropped; RESET: a new generation
//   RegisterMr      fi_mr_reg on the rail's own domain (PdId = rail index)
//   SendControl     fi_tsend with kControlTag on rail 0 (out of band) or on the path's rail
//   ArmTimer        a steady_clock deadline checked in progress()
#include "backends/hw/libfabric/fabric_connection.hpp"

#include <fmt/format.h>
#include <rdma/fi_errno.h>

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <limits>
#include <map>
#include <unordered_map>

#include "backends/hw/libfabric/control_codec.hpp"
#include "backends/hw/libfabric/fabric_rail.hpp"
#include "backends/hw/libfabric/pending_queue.hpp"
#include "backends/hw/libfabric/provider_query.hpp"
#include "backends/hw/libfabric/rc_completion_order.hpp"
#include "engine/failover/ha_connection.hpp"

namespace railcheck {

using fabric::FabricRail;
using fabric::PendingQueue;
using fabric::RailCompletion;
using fabric::RailMemory;
using fabric::RcCompletionOrder;

struct MemoryRegion {
  MrId id{};
  void* addr = nullptr;
  std::size_t len = 0;
  std::vector<std::optional<RailMemory>> per_rail;  // registered lazily, when the engine asks
};

namespace {

// Control receives kept posted on every rail.
constexpr std::size_t kControlRecvsPerRail = 8;
constexpr std::size_t kCqDepth = 1024;

enum class OpKind : std::uint8_t { Data, ControlSend, ControlRecv };

// The context of every operation handed to libfabric. It starts with the fi_context2 the
// provider may use (FI_CONTEXT2 mode), so its address is what the CQ entry gives back.
struct Op {
  fi_context2 fi{};
  OpKind kind = OpKind::Data;
  std::uint32_t rail = 0;
  std::uint64_t generation = 0;  // the rail's generation when posted
  bool posted = false;           // the provider holds it (a completion will come)
  bool stale = false;            // reported already (flushed); its completion is dropped
  WrId wr{};
  WrOpcode opcode = WrOpcode::Send;
  std::uint32_t length = 0;
  std::vector<std::uint8_t> bytes;  // control message buffer
};

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

// A write_imm the provider holds: outside the engine, so outside Op and `outstanding`.
struct WriteOp {
  fi_context2 fi{};  // first: the CQ entry's op_context is this address (FI_CONTEXT2 mode)
  std::uint64_t id = 0;
};

}  // namespace

struct RailSlot {
  std::unique_ptr<FabricRail> rail;
  PendingQueue pending;
  std::uint64_t generation = 0;
  bool err = false;                 // the engine moved this path to ERR
  bool cut = false;                 // the endpoint is gone (cut_rail)
  std::map<WrId, Op*> outstanding;  // data WRs the provider may still complete, by id
  // What the engine hears, and when: RC's completion order (rc_completion_order.hpp).
  RcCompletionOrder order;
  RailStats stats;
};

struct FabricConnection::State {
  FabricOptions options;
  std::chrono::steady_clock::time_point epoch = std::chrono::steady_clock::now();
  // MRs before rails: they are closed before the domains they live on.
  std::vector<RailSlot> rails;
  std::unordered_map<const MemoryRegion*, std::unique_ptr<MemoryRegion>> mrs;
  std::map<MrId, MemoryRegion*> mr_by_id;
  std::unordered_map<const Op*, std::unique_ptr<Op>> ops;
  std::unordered_map<const void*, std::unique_ptr<WriteOp>> writes;  // write_imm in flight
  std::vector<WriteCompletion> write_done;
  std::vector<std::uint32_t> landed_imms;
  std::uint64_t next_write = 0;
  std::unique_ptr<HaConnection> engine;
  std::map<TimerId, Nanos> timers;
  std::map<RequestId, RequestResult> results;
  std::deque<Event> deferred;  // events the driver owes the engine (flushes, failed posts)
  std::vector<RailCompletion> batch;
  std::uint64_t next_request = 0;
  std::uint64_t next_mr = 0;
  std::uint64_t replayed = 0;
  bool feeding = false;
  // RAILCHECK_FABRIC_TRACE=1 prints the engine's trace notes (failovers, replays) to stderr.
  bool trace_to_stderr = std::getenv("RAILCHECK_FABRIC_TRACE") != nullptr;
  bool handshake_failed = false;
  std::optional<Error> registration_error;
  // Delivery acks (rc_completion_order.hpp, point 3): the sender holds each send's success
  // until the receiver's backend acknowledges the message; the receiver acknowledges its
  // engine's delivered watermark whenever it moves. `ack_sent`: the last watermark sent.
  bool delivery_acks = false;
  std::uint64_t ack_sent = 0;
  std::vector<CompletionEvent> released;  // scratch for RcCompletionOrder

  ~State() {
    // Ops the provider still holds must outlive the endpoint; rails close first, then ops go.
    for (auto& [p, m] : mrs) m->per_rail.clear();
    rails.clear();
  }

  Nanos now() const { return std::chrono::duration_cast<Nanos>(std::chrono::steady_clock::now() - epoch); }

  // ---- engine I/O ----
  void feed(const Event& ev) {
    deferred.push_back(ev);
    drain();
  }
  // Hands the engine every event the driver owes it, in order. Never re-entered: an action that
  // produces an event (a flush, a refused post) queues it behind the batch being executed.
  void drain() {
    if (feeding) return;
    feeding = true;
    while (!deferred.empty()) {
      Event e = std::move(deferred.front());
      deferred.pop_front();
      Actions acts;
      engine->handle(now(), e, acts);
      execute(acts);
    }
    feeding = false;
  }

  void execute(Actions& actions) {
    for (Action& a : actions) {
      if (auto* p = std::get_if<PostSend>(&a)) {
        post_data(p->path, p->wr, std::nullopt);
      } else if (auto* p = std::get_if<PostRecv>(&a)) {
        post_data(p->path, p->wr, std::nullopt);
      } else if (auto* p = std::get_if<PostWrite>(&a)) {
        post_data(p->path, p->wr, std::make_pair(p->remote_addr, p->rkey));
      } else if (auto* m = std::get_if<ModifyQp>(&a)) {
        modify(*m);
      } else if (auto* r = std::get_if<RegisterMr>(&a)) {
        register_on_rail(*r);
      } else if (auto* t = std::get_if<ArmTimer>(&a)) {
        timers[t->timer] = t->deadline;
      } else if (auto* t = std::get_if<CancelTimer>(&a)) {
        timers.erase(t->timer);
      } else if (auto* s = std::get_if<SendControl>(&a)) {
        send_control(s->channel, s->message);
      } else if (auto* r = std::get_if<CompleteRequest>(&a)) {
        RequestResult res;
        res.ok = r->outcome == RequestOutcome::Done;
        res.sizes.assign(r->sizes.begin(), r->sizes.end());
        if (r->error) res.error = r->error->message();
        results[r->request] = std::move(res);
      } else if (auto* f = std::get_if<ConnectionFailed>(&a)) {
        (void)f;
      } else if (auto* t = std::get_if<Trace>(&a)) {
        if (t->note.kind == TraceKind::Replayed) replayed += t->note.count;
        if (trace_to_stderr)
          fmt::print(stderr, "[railcheck fabric {} {:.3f} ms] {} path {} count {} {}\n",
                     engine->role() == ConnRole::Sender ? "send" : "recv", to_millis(now()), to_string(t->note.kind),
                     t->note.path.value, t->note.count, t->note.detail);
      }
    }
  }

  // ---- posting ----
  Op* new_op(OpKind kind, std::uint32_t rail) {
    auto op = std::make_unique<Op>();
    op->kind = kind;
    op->rail = rail;
    op->generation = rails[rail].generation;
    Op* raw = op.get();
    ops.emplace(raw, std::move(op));
    return raw;
  }
  void drop_op(Op* op) { ops.erase(op); }

  void owe_completion(PathIndex path, const WorkRequest& wr, WcStatus st) {
    deferred.push_back(CompletionEvent{path, wr.id, wr.opcode, st, 0, std::nullopt});
  }

  void post_data(PathIndex path, const WorkRequest& wr, std::optional<std::pair<std::uint64_t, std::uint32_t>> rma) {
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
    op->length = len;
    slot.outstanding.emplace(wr.id, op);
    FabricRail* rail = slot.rail.get();
    const std::optional<std::uint32_t> imm = wr.imm;
    // A send's immediate is its message sequence number: the receiver's acknowledgements name it.
    const bool needs_ack = delivery_acks && wr.opcode == WrOpcode::Send && imm.has_value();
    slot.order.posted(wr.id, wr.opcode, needs_ack ? imm : std::nullopt);
    PendingQueue::Post post;
    if (wr.opcode == WrOpcode::Recv) {
      ++slot.stats.posted_recvs;
      post.attempt = [rail, buf, len, desc, op] {
        const ssize_t rc = rail->recv(buf, len, desc, op);
        op->posted = rc == 0;
        return rc;
      };
    } else if (rma) {
      ++slot.stats.posted_writes;
      const auto [addr, key] = *rma;
      post.attempt = [rail, buf, len, desc, imm, addr, key, op] {
        const ssize_t rc = rail->write(buf, len, desc, imm, addr, key, op);
        op->posted = rc == 0;
        return rc;
      };
    } else {
      ++slot.stats.posted_sends;
      post.attempt = [rail, buf, len, desc, imm, op] {
        const ssize_t rc = rail->send(buf, len, desc, imm, op);
        op->posted = rc == 0;
        return rc;
      };
    }
    post.on_error = [this, path, op](ssize_t) {
      // The provider refused the post outright: report it as the path's failure.
      RailSlot& s = rails[path.value];
      s.outstanding.erase(op->wr);
      s.order.forget(op->wr);
      deferred.push_back(CompletionEvent{path, op->wr, op->opcode, WcStatus::GeneralErr, 0, std::nullopt});
      drop_op(op);
    };
    slot.pending.submit(std::move(post));
  }

  void post_control_recv(std::uint32_t r) {
    RailSlot& slot = rails[r];
    Op* op = new_op(OpKind::ControlRecv, r);
    op->bytes.resize(fabric::kControlMaxBytes);
    FabricRail* rail = slot.rail.get();
    slot.pending.submit({[rail, op] {
                           const ssize_t rc = rail->trecv(op->bytes.data(), op->bytes.size(), nullptr, op);
                           op->posted = rc == 0;
                           return rc;
                         },
                         [this, op](ssize_t) { drop_op(op); }});
  }

  void send_control(const ControlChannel& ch, const ControlMessage& m) {
    const std::uint32_t r = ch.out_of_band ? 0 : ch.path.value;
    RailSlot& slot = rails.at(r);
    // A message to a dead link or to a peer we have no address for is lost, as it would be on
    // the wire; the engine's timers cover lost control messages.
    if (slot.cut || !slot.rail->has_peer()) return;
    auto bytes = fabric::encode_control(ch.out_of_band, m);
    if (!bytes) return;
    send_control_bytes(r, std::move(bytes).value(), ch.out_of_band);
  }

  void send_control_bytes(std::uint32_t r, std::vector<std::uint8_t> bytes, bool oob) {
    RailSlot& slot = rails.at(r);
    Op* op = new_op(OpKind::ControlSend, r);
    op->bytes = std::move(bytes);
    ++slot.stats.control_sent;
    FabricRail* rail = slot.rail.get();
    slot.pending.submit({[rail, op] {
                           const ssize_t rc = rail->tsend(op->bytes.data(), op->bytes.size(), nullptr, op);
                           op->posted = rc == 0;
                           return rc;
                         },
                         [this, op, oob](ssize_t) {
                           if (oob && !engine->comm_ready()) handshake_failed = true;
                           drop_op(op);
                         }});
  }

  // ---- QP state ----
  void modify(const ModifyQp& m) {
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
        }
        break;
      case QpState::Err: flush(m.path); break;
      default: break;  // INIT, RTS, SQD, SQE: nothing to do on an RDM endpoint
    }
  }

  // ERR: every WR outstanding on the path completes with WR_FLUSH_ERR, in posting order.
  void flush(PathIndex path) {
    RailSlot& slot = rails.at(path.value);
    slot.err = true;
    ++slot.generation;
    slot.stats.flushed += slot.outstanding.size();
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
  }

  void register_on_rail(const RegisterMr& r) {
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
  void on_completion(std::uint32_t r, const RailCompletion& c) {
    auto it = ops.find(static_cast<const Op*>(c.context));
    if (it == ops.end()) return;  // a remote write's CQ data: no local operation (not used by HA)
    Op* op = it->second.get();
    op->posted = false;
    RailSlot& slot = rails[r];
    if (op->kind == OpKind::ControlSend) {
      if (c.error != 0 && !engine->comm_ready() && op->rail == 0) handshake_failed = true;
      drop_op(op);
      return;
    }
    if (op->kind == OpKind::ControlRecv) {
      if (c.error == 0 && !slot.cut) {
        auto decoded = fabric::decode_control(std::span<const std::uint8_t>(op->bytes.data(), c.len));
        if (decoded && decoded->delivery_ack) {
          on_delivery_ack(*decoded->delivery_ack);
        } else if (decoded) {
          const ControlChannel ch = decoded->out_of_band ? ControlChannel::oob() : ControlChannel::on(PathIndex{r});
          feed(ControlReceived{ch, std::move(*decoded->message)});
        }
      }
      drop_op(op);
      if (!slot.cut && c.error != FI_ECANCELED) post_control_recv(r);
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
    } else if (op->opcode == WrOpcode::Recv) {
      ev.byte_len = static_cast<std::uint32_t>(c.len);
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

  // Queues for the engine every completion of the rail that RC order lets through now.
  void release(RailSlot& slot) {
    released.clear();
    slot.order.release(released);
    deferred.insert(deferred.end(), released.begin(), released.end());
  }

  // ERR or a cut: what RC order lets through as it is, then flushes (RcCompletionOrder::fail).
  void flush_in_order(RailSlot& slot, PathIndex path, WcStatus first_status) {
    released.clear();
    slot.order.fail(path, first_status, released);
    deferred.insert(deferred.end(), released.begin(), released.end());
  }

  // Sender: the receiver's engine holds every message below `next`; sends it covers complete.
  void on_delivery_ack(const fabric::DeliveryAck& a) {
    if (!delivery_acks || engine->role() != ConnRole::Sender) return;
    for (RailSlot& slot : rails) {
      slot.order.acknowledged(a.next);
      release(slot);
    }
    drain();
  }

  // Receiver: acknowledge the delivered watermark once it moved, on the path the engine uses.
  void acknowledge_delivery() {
    if (!delivery_acks || engine->role() != ConnRole::Receiver || engine->failed()) return;
    const std::uint64_t delivered = engine->delivered();
    if (delivered == ack_sent) return;
    const std::uint32_t r = engine->active_path().value;
    RailSlot& slot = rails.at(r);
    if (slot.cut || slot.err || !slot.rail->has_peer()) return;  // the next progress() tries again
    send_control_bytes(r, fabric::encode_delivery_ack(fabric::DeliveryAck{delivered}), false);
    ack_sent = delivered;
  }

  // write_imm's CQ entries, which the engine never hears of: the initiator's completion of a
  // WriteOp, and at the target a remote write's immediate (FI_REMOTE_CQ_DATA with no operation
  // of ours behind it; a receive's immediate comes with its Op). True when consumed.
  bool on_write_event(const RailCompletion& c) {
    if (auto w = writes.find(c.context); w != writes.end()) {
      WriteCompletion done{w->second->id, c.error == 0, {}};
      if (c.error != 0) done.error = fmt::format("{} ({})", fi_strerror(c.error), c.error_text);
      write_done.push_back(std::move(done));
      writes.erase(w);
      return true;
    }
    if ((c.flags & FI_REMOTE_CQ_DATA) != 0 && c.error == 0 && ops.count(static_cast<const Op*>(c.context)) == 0) {
      landed_imms.push_back(static_cast<std::uint32_t>(c.data));
      return true;
    }
    return false;
  }

  // The rail's registration of `mr`, made now if the engine has not asked for it yet.
  Result<const RailMemory*> rail_memory(MemoryRegion* mr, PathIndex path) {
    if (mr == nullptr || mrs.count(mr) == 0) return Error{"the memory region is not registered here", ""};
    if (path.value >= rails.size()) return Error{fmt::format("rail {} does not exist", path.value), ""};
    RailSlot& slot = rails[path.value];
    if (slot.cut) return Error{fmt::format("rail {} was cut", path.value), ""};
    if (mr->len == 0) return Error{"a zero-length memory region has no registration", ""};
    if (!mr->per_rail.at(path.value)) {
      auto reg = slot.rail->register_memory(mr->addr, mr->len);
      if (!reg) return reg.error();
      mr->per_rail[path.value] = std::move(reg).value();
    }
    return &*mr->per_rail[path.value];
  }

  void poll_rails() {
    const std::size_t want = std::max<std::size_t>(1, options.tunables.poll_batch);
    batch.resize(want);
    for (std::uint32_t r = 0; r < rails.size(); ++r) {
      if (rails[r].cut) continue;
      // Bounded: a flood of completions cannot keep one progress() call forever.
      for (int round = 0; round < 4; ++round) {
        auto n = rails[r].rail->poll(batch);
        if (!n || n.value() == 0) break;
        for (std::size_t i = 0; i < n.value(); ++i)
          if (!on_write_event(batch[i])) on_completion(r, batch[i]);
      }
      rails[r].pending.retry();
    }
  }

  void fire_timers() {
    const Nanos t = now();
    while (!timers.empty()) {
      auto due = std::min_element(timers.begin(), timers.end(),
                                  [](const auto& a, const auto& b) { return a.second < b.second; });
      if (due->second > t) break;
      const TimerId id = due->first;
      timers.erase(due);
      feed(TimerFired{id});
    }
  }

  void cut(PathIndex path) {
    if (path.value >= rails.size() || rails[path.value].cut) return;
    RailSlot& slot = rails[path.value];
    slot.cut = true;
    slot.stats.cut = true;
    slot.pending.clear();
    // As on an RC QP whose link died: the oldest WR fails with RETRY_EXC_ERR, the rest flush.
    flush_in_order(slot, path, WcStatus::RetryExcErr);
    slot.outstanding.clear();
    // shm (1.17, seen here): a peer endpoint in the same process dereferences a closed
    // endpoint's region and crashes in fi_cq_read. There the rail is silenced instead: never
    // posted to or polled again, closed with the connection. Elsewhere it is torn down.
    if (fabric::is_shm(options.provider)) return;
    for (auto& [p, m] : mrs) m->per_rail.at(path.value).reset();
    slot.rail.reset();  // fi_close: the endpoint, its CQ, AV, domain and fabric are gone
    // Nothing the provider held on this rail will ever complete now.
    for (auto it = ops.begin(); it != ops.end();) {
      it = it->second->rail == path.value ? ops.erase(it) : std::next(it);
    }
  }
};

// ---- construction ----

Result<std::unique_ptr<FabricConnection::State>> FabricConnection::open_state(const FabricOptions& o, bool sender) {
  const ConnRole role = sender ? ConnRole::Sender : ConnRole::Receiver;
  if (o.rails == 0) return Error{"a FabricConnection needs at least one rail", "set rails >= 1"};
  auto st = std::make_unique<State>();
  st->options = o;
  st->delivery_acks = o.delivery_acks.value_or(fabric::send_completion_is_local(o.provider));
  HaConnectionConfig cfg;
  cfg.role = role;
  cfg.tunables = o.tunables;
  for (std::uint32_t r = 0; r < o.rails; ++r) {
    const std::string node = r < o.rail_addresses.size() ? o.rail_addresses[r] : std::string{};
    auto rail = FabricRail::open(o.provider, node, kCqDepth);
    if (!rail) {
      Error e = rail.error();
      e.what = fmt::format("rail {}: {}", r, e.what);
      return e;
    }
    cfg.paths.push_back(PathConfig{PdId{r}, rail.value()->local()});
    RailSlot slot;
    slot.rail = std::move(rail).value();
    st->rails.push_back(std::move(slot));
  }
  for (std::uint32_t r = 0; r < st->rails.size(); ++r)
    for (std::size_t i = 0; i < kControlRecvsPerRail; ++i) st->post_control_recv(r);
  st->engine = std::make_unique<HaConnection>(std::move(cfg));
  return st;
}

FabricConnection::FabricConnection(std::unique_ptr<State> state) : s_(std::move(state)) {}
FabricConnection::~FabricConnection() = default;

Result<std::unique_ptr<FabricConnection>> FabricConnection::listen(const FabricOptions& options,
                                                                   std::vector<std::uint8_t>& handle_out) {
  auto st = open_state(options, false);
  if (!st) return st.error();
  std::unique_ptr<FabricConnection> c(new FabricConnection(std::move(st).value()));
  Actions acts;
  const ConnectionHandle h = c->s_->engine->listen(acts);
  c->s_->execute(acts);
  const auto bytes = encode_handle(h);
  handle_out.assign(bytes.begin(), bytes.begin() + kHandleWireSize);
  return c;
}

Result<std::unique_ptr<FabricConnection>> FabricConnection::connect(const FabricOptions& options,
                                                                    std::span<const std::uint8_t> handle) {
  auto st = open_state(options, true);
  if (!st) return st.error();
  std::unique_ptr<FabricConnection> c(new FabricConnection(std::move(st).value()));
  State& s = *c->s_;
  Actions acts;
  auto ok = s.engine->connect(s.now(), handle, acts);
  if (!ok) return Error{"connect: the peer's handle was rejected: " + ok.error().what, ok.error().hint};
  s.execute(acts);
  if (!s.rails[0].rail->has_peer())
    return Error{"connect: the handle's primary endpoint is not a libfabric address of this provider", ""};
  return c;
}

// ---- the user's calls ----

void FabricConnection::progress() {
  s_->poll_rails();
  s_->fire_timers();
  s_->drain();
  s_->acknowledge_delivery();
}

bool FabricConnection::ready() const { return s_->engine->comm_ready(); }
bool FabricConnection::failed() const { return s_->engine->failed() || s_->handshake_failed; }

Result<MemoryRegion*> FabricConnection::register_memory(void* addr, std::size_t len) {
  auto m = std::make_unique<MemoryRegion>();
  m->id = MrId{++s_->next_mr};
  m->addr = addr;
  m->len = len;
  m->per_rail.resize(s_->rails.size());
  MemoryRegion* raw = m.get();
  s_->mrs.emplace(raw, std::move(m));
  s_->mr_by_id[raw->id] = raw;
  s_->registration_error.reset();
  s_->feed(UserRegMr{raw->id, reinterpret_cast<std::uint64_t>(addr), len});
  if (s_->registration_error) {
    Error e = *s_->registration_error;
    (void)deregister_memory(raw);
    return e;
  }
  return raw;
}

Result<bool> FabricConnection::deregister_memory(MemoryRegion* mr) {
  auto it = s_->mrs.find(mr);
  if (it == s_->mrs.end()) return Error{"deregister_memory: not a region of this connection", ""};
  s_->mr_by_id.erase(mr->id);
  s_->mrs.erase(it);
  return true;
}

Result<RequestId> FabricConnection::isend(const void* data, std::size_t size, std::uint64_t tag, MemoryRegion* mr) {
  if (size > std::numeric_limits<std::uint32_t>::max())
    return Error{fmt::format("isend of {} bytes: one message carries at most 4 GiB - 1", size), ""};
  if (mr == nullptr || s_->mrs.count(mr) == 0)
    return Error{"isend: the buffer's memory region is not registered here", ""};
  const RequestId id{++s_->next_request};
  s_->feed(UserIsend{id, Sge{reinterpret_cast<std::uint64_t>(data), static_cast<std::uint32_t>(size), mr->id}, tag});
  return id;
}

Result<RequestId> FabricConnection::irecv(std::span<void* const> data, std::span<const std::size_t> sizes,
                                          std::span<const std::uint64_t> tags, std::span<MemoryRegion* const> mrs) {
  if (data.empty() || data.size() != sizes.size() || data.size() != tags.size() || data.size() != mrs.size())
    return Error{fmt::format("irecv: {} buffers, {} sizes, {} tags, {} memory regions; need the same non-zero count",
                             data.size(), sizes.size(), tags.size(), mrs.size()),
                 ""};
  UserIrecv ev;
  ev.request = RequestId{++s_->next_request};
  for (std::size_t i = 0; i < data.size(); ++i) {
    if (sizes[i] > std::numeric_limits<std::uint32_t>::max())
      return Error{fmt::format("irecv buffer {} of {} bytes: at most 4 GiB - 1", i, sizes[i]), ""};
    if (mrs[i] == nullptr || s_->mrs.count(mrs[i]) == 0)
      return Error{fmt::format("irecv: buffer {}'s memory region is not registered here", i), ""};
    ev.buffers.push_back(
        Sge{reinterpret_cast<std::uint64_t>(data[i]), static_cast<std::uint32_t>(sizes[i]), mrs[i]->id});
    ev.tags.push_back(tags[i]);
  }
  const RequestId id = ev.request;
  s_->feed(ev);
  return id;
}

std::optional<RequestResult> FabricConnection::test(RequestId request) {
  auto it = s_->results.find(request);
  if (it == s_->results.end()) {
    progress();
    it = s_->results.find(request);
    if (it == s_->results.end()) return std::nullopt;
  }
  RequestResult r = std::move(it->second);
  s_->results.erase(it);
  return r;
}

Result<std::uint64_t> FabricConnection::write_imm(PathIndex rail, const void* data, std::size_t size, MemoryRegion* mr,
                                                  std::uint64_t remote_addr, std::uint64_t remote_key,
                                                  std::uint32_t imm) {
  auto mem = s_->rail_memory(mr, rail);
  if (!mem) return Error{"write_imm: " + mem.error().what, mem.error().hint};
  const auto* base = static_cast<const std::uint8_t*>(mr->addr);
  const auto* p = static_cast<const std::uint8_t*>(data);
  if (size > 0 && (p < base || p + size > base + mr->len))
    return Error{fmt::format("write_imm: {} bytes at {} fall outside the {}-byte memory region", size, data, mr->len),
                 ""};
  RailSlot& slot = s_->rails[rail.value];
  if (slot.err || !slot.rail->has_peer())
    return Error{fmt::format("write_imm: rail {} has no usable peer yet", rail.value),
                 "wait for ready() (rail 0) or the standby's phase 2"};
  auto op = std::make_unique<WriteOp>();
  const std::uint64_t id = ++s_->next_write;
  op->id = id;
  WriteOp* raw = op.get();
  s_->writes.emplace(raw, std::move(op));
  ++slot.stats.posted_writes;
  FabricRail* r = slot.rail.get();
  void* desc = mem.value()->desc;
  State* st = s_.get();
  if (size == 0 && r->zero_length_write_injected()) {
    // No local completion comes for an inject: the write is complete once the provider took it.
    slot.pending.submit(
        {[r, imm, remote_addr, remote_key, st, raw] {
           const ssize_t rc = r->inject_zero_write(imm, remote_addr, remote_key);
           if (rc == 0) {
             st->write_done.push_back(WriteCompletion{raw->id, true, {}});
             st->writes.erase(raw);
           }
           return rc;
         },
         [st, raw](ssize_t rc) {
           st->write_done.push_back(WriteCompletion{
               raw->id, false, fmt::format("fi_inject_writedata: {}", fi_strerror(static_cast<int>(-rc)))});
           st->writes.erase(raw);
         }});
    return id;
  }
  slot.pending.submit({[r, data, size, desc, imm, remote_addr, remote_key, raw] {
                         return r->write(data, size, desc, imm, remote_addr, remote_key, raw);
                       },
                       [st, raw](ssize_t rc) {
                         st->write_done.push_back(WriteCompletion{
                             raw->id, false, fmt::format("fi_writedata: {}", fi_strerror(static_cast<int>(-rc)))});
                         st->writes.erase(raw);
                       }});
  return id;
}

void FabricConnection::completed_writes(std::vector<WriteCompletion>& out) {
  progress();
  out.insert(out.end(), std::make_move_iterator(s_->write_done.begin()), std::make_move_iterator(s_->write_done.end()));
  s_->write_done.clear();
}

void FabricConnection::landed_imms(std::vector<std::uint32_t>& out) {
  progress();
  out.insert(out.end(), s_->landed_imms.begin(), s_->landed_imms.end());
  s_->landed_imms.clear();
}

Result<std::uint64_t> FabricConnection::remote_key(MemoryRegion* mr, PathIndex rail) {
  auto mem = s_->rail_memory(mr, rail);
  if (!mem) return Error{"remote_key: " + mem.error().what, mem.error().hint};
  return mem.value()->key;
}

Result<std::uint64_t> FabricConnection::remote_address(MemoryRegion* mr, PathIndex rail, std::size_t offset) {
  auto mem = s_->rail_memory(mr, rail);
  if (!mem) return Error{"remote_address: " + mem.error().what, mem.error().hint};
  if (offset > mr->len)
    return Error{fmt::format("remote_address: offset {} is past the {}-byte region", offset, mr->len), ""};
  return mem.value()->base + offset;
}

bool FabricConnection::rail_connected(PathIndex rail) const {
  if (rail.value >= s_->rails.size()) return false;
  const RailSlot& slot = s_->rails[rail.value];
  return !slot.cut && !slot.err && slot.rail->has_peer();
}

void FabricConnection::cut_rail(PathIndex rail) {
  s_->cut(rail);
  s_->drain();
}

ConnectionStats FabricConnection::stats() const {
  ConnectionStats st;
  st.failovers = s_->engine->failovers();
  st.replayed = s_->replayed;
  st.active_rail = s_->engine->active_path().value;
  for (std::uint32_t i = 0; i < s_->rails.size(); ++i) {
    const RailSlot& r = s_->rails[i];
    RailStats rs = r.stats;
    rs.eagain = r.pending.deferred();
    rs.ready = i < s_->engine->path_count() && s_->engine->path(PathIndex{i}).health == PathHealth::Ready;
    st.rails.push_back(rs);
  }
  return st;
}

const std::string& FabricConnection::provider() const { return s_->options.provider; }

}  // namespace railcheck
