// FabricConnection's construction (open the rails, start the engine's handshake), the user's
// two-sided calls (isend/irecv/test, memory registration), fault injection and stats. The
// action executor behind them is fabric_executor.cpp; the one-sided write API is
// fabric_write_imm.cpp; what a connection holds is fabric_connection_state.hpp.
#include "backends/hw/libfabric/fabric_connection.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <limits>

#include "backends/hw/libfabric/fabric_connection_state.hpp"
#include "backends/hw/libfabric/provider_query.hpp"
#include "engine/core/engine_assert.hpp"

namespace railcheck {

namespace {

// Control receives kept posted on every rail.
constexpr std::size_t kControlRecvsPerRail = 8;
constexpr std::size_t kCqDepth = 1024;

}  // namespace

// ---- construction ----

FabricConnection::State::~State() {
  // Ops the provider still holds must outlive the endpoint; rails close first, then ops go.
  for (auto& [p, m] : mrs) m->per_rail.clear();
  rails.clear();
}

Result<std::unique_ptr<FabricConnection::State>> FabricConnection::open_state(const FabricOptions& o, bool sender,
                                                                              bool peer_advertises_probes) {
  const ConnRole role = sender ? ConnRole::Sender : ConnRole::Receiver;
  if (o.rails == 0) return Error{"a FabricConnection needs at least one rail", "set rails >= 1"};
  auto st = std::make_unique<State>();
  st->options = o;
  st->delivery_acks = o.delivery_acks.value_or(fabric::backend_acks_by_default(o.provider));
  // RAILCHECK_FABRIC_DELIVERY_ACKS=0|1 overrides both, to see what the acks buy (a peer process
  // inherits it, so both sides agree).
  if (const char* env = std::getenv("RAILCHECK_FABRIC_DELIVERY_ACKS");
      env != nullptr && (env[0] == '0' || env[0] == '1'))
    st->delivery_acks = env[0] == '1';
  // Staging only takes the delivery ack out of a send's completion: without acks a send
  // completes on the provider's completion already.
  if (st->delivery_acks) st->staged = fabric::StagedSends(o.staged_send_slots, o.staged_send_bytes);
  // A receiver whose peer stages as it does acks a staged-size message lazily: its sender
  // completed it already (delivery_ack_clock.hpp). Without staging every ack goes at once.
  st->ack_clock = fabric::DeliveryAckClock(fabric::DeliveryAckTiming{o.staged_send_bytes});
  HaConnectionConfig cfg;
  cfg.role = role;
  cfg.tunables = o.tunables;
  for (std::uint32_t r = 0; r < o.rails; ++r) {
    const std::string node = r < o.rail_addresses.size() ? o.rail_addresses[r] : std::string{};
    auto rail = FabricRail::open(o.provider, node, kCqDepth,
                                 fabric::local_send_completion_pays(o.provider, st->delivery_acks)
                                     ? fabric::SendCompletion::Local
                                     : fabric::SendCompletion::Delivered);
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
  // ProbeRail is a kernel-answered TCP probe, never an fi_read (fabric_rail_probes.cpp says why).
  st->open_probes(cfg, sender, peer_advertises_probes);
  for (std::uint32_t r = 0; r < st->rails.size(); ++r)
    for (std::size_t i = 0; i < kControlRecvsPerRail; ++i) st->post_control_recv(r);
  // On hardware a broken engine rule fails this connection with the rule as its reason; it
  // never aborts the application (engine/core/engine_assert.hpp).
  set_assertion_mode(AssertionMode::FailConnection);
  st->engine = std::make_unique<HaConnection>(std::move(cfg));
  return st;
}

FabricConnection::FabricConnection(std::unique_ptr<State> state) : s_(std::move(state)) {}
FabricConnection::~FabricConnection() {
  // A coalesced ack still owed goes out before the endpoint closes (delivery_ack_clock.hpp): a
  // receiver that closed right after its last message landed left its sender's last staged sends
  // unacknowledged, and the sender failed over to a peer that was gone (plugin_harness_test, the
  // LL case over net, 2 runs in 750).
  if (s_ != nullptr && owes_delivery_ack()) {
    s_->ack_clock.owe_now();
    progress();
  }
}

Result<std::unique_ptr<FabricConnection>> FabricConnection::listen(const FabricOptions& options,
                                                                   std::vector<std::uint8_t>& handle_out) {
  auto st = open_state(options, false, false);
  if (!st) return st.error();
  std::unique_ptr<FabricConnection> c(new FabricConnection(std::move(st).value()));
  Actions acts;
  const ConnectionHandle h = c->s_->engine->listen(acts);
  c->s_->execute(acts);
  const auto bytes = encode_handle(h);
  handle_out.assign(bytes.begin(), bytes.begin() + kHandleWireSize);
  c->s_->start_sealing(handle_out, false);
  return c;
}

Result<std::unique_ptr<FabricConnection>> FabricConnection::connect(const FabricOptions& options,
                                                                    std::span<const std::uint8_t> handle) {
  // The engine decodes the handle again in connect(); here only rail 0's probe port is read.
  const auto peeked = decode_handle(handle);
  auto st = open_state(options, true, peeked && fabric::probe_port_of(peeked->handle.primary) != 0);
  if (!st) return st.error();
  std::unique_ptr<FabricConnection> c(new FabricConnection(std::move(st).value()));
  State& s = *c->s_;
  Actions acts;
  auto ok = s.engine->connect(s.now(), handle, acts);
  if (!ok) return Error{"connect: the peer's handle was rejected: " + ok.error().what, ok.error().hint};
  s.start_sealing(handle.first(std::min(handle.size(), kHandleWireSize)), true);  // before the ConnectRequest goes
  s.execute(acts);
  if (!s.rails[0].rail->has_peer())
    return Error{"connect: the handle's primary endpoint is not a libfabric address of this provider", ""};
  return c;
}

// ---- the user's calls ----

void FabricConnection::progress() {
  ++s_->progress_calls;
  // One coarse clock read per call, for the idle-rail rule and the timers (coarse_clock.hpp).
  const Nanos coarse_now = s_->coarse.since_epoch();
  s_->poll_rails(coarse_now);
  // Answers before timers: a caller that was descheduled past a probe timeout finds the answers
  // its kernel already holds before the detector counts the probes as misses.
  if (s_->probes) s_->poll_probes();
  s_->fire_timers(coarse_now);
  if (!s_->deferred.empty()) s_->drain();
  if (s_->delivery_acks) s_->acknowledge_delivery();
}

bool FabricConnection::ready() const { return s_->engine->comm_ready(); }
bool FabricConnection::failed() const { return s_->engine->failed() || s_->handshake_failed || s_->staged_send_lost; }

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
  Sge sge{reinterpret_cast<std::uint64_t>(data), static_cast<std::uint32_t>(size), mr->id};
  if (auto copy = stage(id, data, size))
    sge = Sge{reinterpret_cast<std::uint64_t>(*copy), sge.length, s_->staged_mr->id};
  s_->feed(UserIsend{id, sge, tag});
  return id;
}

std::optional<const std::byte*> FabricConnection::stage(RequestId id, const void* data, std::size_t size) {
  State& s = *s_;
  if (s.staging_off || !s.staged.fits(size)) return std::nullopt;
  auto copy = s.staged.stage(id, data, size);
  if (!copy || s.staged_mr != nullptr) return copy;
  // The first staged send: register the arena the copies live in, once, on every rail the
  // engine posts it to (lazily, as any region).
  auto mr = register_memory(const_cast<std::byte*>(s.staged.arena()), s.staged.arena_bytes());
  if (!mr) {
    fmt::print(stderr,
               "railcheck fabric: registering the staged-send arena failed ({}); sends wait for their "
               "delivery ack\n",
               mr.error().message());
    (void)s.staged.completed(id);
    s.staging_off = true;
    return std::nullopt;
  }
  s.staged_mr = mr.value();
  return copy;
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
  if (auto r = finished(request)) return r;
  progress();
  return finished(request);
}

std::optional<RequestResult> FabricConnection::finished(RequestId request) {
  auto it = s_->results.find(request);
  if (it == s_->results.end()) return std::nullopt;
  RequestResult r = std::move(it->second);
  s_->results.erase(it);
  return r;
}

void FabricConnection::cut_rail(PathIndex rail) {
  s_->cut(rail);
  s_->drain();
}

ConnectionStats FabricConnection::stats() const {
  ConnectionStats st;
  st.progress_calls = s_->progress_calls;
  st.staged_early = s_->staged_early;
  st.failovers = s_->engine->failovers();
  st.replayed = s_->replayed;
  st.failovers_started = s_->failovers_started;
  st.active_rail = s_->engine->active_path().value;
  st.first_failover_at = s_->first_failover_at;
  st.first_failover_why = s_->first_failover_why;
  st.liveness = s_->engine->role() == ConnRole::Sender && s_->engine->liveness().enabled();
  st.control_refused = s_->control_refused;
  st.first_control_refusal = s_->first_control_refusal;
  for (std::uint32_t i = 0; i < s_->rails.size(); ++i) {
    const RailSlot& r = s_->rails[i];
    RailStats rs = r.stats;
    rs.eagain = r.pending.deferred();
    if (s_->probes) {
      rs.probes_sent = s_->probes->counts(i).sent;
      rs.probes_answered = s_->probes->counts(i).answered;
    }
    rs.ready = i < s_->engine->path_count() && s_->engine->path(PathIndex{i}).health == PathHealth::Ready;
    st.rails.push_back(rs);
  }
  return st;
}

std::uint32_t FabricConnection::failovers() const { return s_->engine->failovers(); }

std::uint64_t FabricConnection::control_refused() const { return s_->control_refused; }

std::size_t FabricConnection::unacknowledged_sends() const { return s_->staged.in_use(); }

bool FabricConnection::owes_delivery_ack() const {
  return s_->delivery_acks && s_->engine->role() == ConnRole::Receiver && !s_->engine->failed() &&
         s_->engine->delivered() != s_->ack_sent;
}

const std::string& FabricConnection::provider() const { return s_->options.provider; }

}  // namespace railcheck
