#include "backends/hw/nccl/striped_connection.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "engine/core/engine_assert.hpp"
#include "engine/handshake/handle_codec.hpp"

namespace railcheck::nccl {
namespace {

// How often the pump progresses tail streams with nothing outstanding: as the background
// thread's default period (HA_NCCL_PROGRESS_US), far under the soft RTO and heartbeat timeouts.
constexpr std::chrono::milliseconds kIdleProgress{1};

static_assert(kMaxStreams * kHandleWireSize <= kStreamCountOffset, "the streams' handles fit before the count");
static_assert(kStripeBytesOffset + 4 <= kHandleMaxSize, "the handle fits NCCL_NET_HANDLE_MAXSIZE");

void put_u32(std::vector<std::uint8_t>& out, std::size_t at, std::uint32_t v) {
  for (std::size_t i = 0; i < 4; ++i) out[at + i] = static_cast<std::uint8_t>(v >> (8 * i));
}

std::uint32_t get_u32(std::span<const std::uint8_t> in, std::size_t at) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < 4; ++i) v |= std::uint32_t{in[at + i]} << (8 * i);
  return v;
}

}  // namespace

StripedConnection::TailLock::TailLock(StripedConnection& c, std::uint32_t stream) {
  Tail& t = c.tail(stream);
  t.waiting.fetch_add(1, std::memory_order_acq_rel);
  lock_ = std::unique_lock(t.mu);
  t.waiting.fetch_sub(1, std::memory_order_acq_rel);
}

std::vector<StripedConnection::TailLock> StripedConnection::lock_all_tails() {
  std::vector<TailLock> locks;
  locks.reserve(streams_.size());
  for (std::uint32_t i = 1; i < streams_.size(); ++i) locks.emplace_back(*this, i);
  return locks;
}

StripedConnection::StripedConnection(StripeLayout layout, std::vector<std::unique_ptr<FabricConnection>> streams)
    : layout_(layout), streams_(std::move(streams)) {
  RAILCHECK_ASSERT(streams_.size() == layout_.streams, "one connection per stream");
  tails_.resize(streams_.size());
  for (std::size_t i = 1; i < streams_.size(); ++i) tails_[i] = std::make_unique<Tail>();
}

StripedConnection::~StripedConnection() {
  for (std::size_t i = 1; i < tails_.size(); ++i) {
    Tail& t = *tails_[i];
    if (!t.pump.joinable()) continue;
    {
      std::lock_guard lock(t.post_mu);
      t.stop = true;
    }
    t.wake.notify_all();
    t.pump.join();
  }
}

namespace {

// The low 24 bits of the job key's id as the handle carries it; 0 is "no key".
std::uint32_t key_id_of(const FabricOptions& o) {
  if (!o.key) return 0;
  const std::uint32_t id = o.key->key_id() & 0xFFFFFFU;
  return id == 0 ? 1 : id;
}

}  // namespace

Result<std::unique_ptr<StripedConnection>> StripedConnection::listen(const FabricOptions& options,
                                                                     const StripeLayout& layout,
                                                                     std::vector<std::uint8_t>& handle_out) {
  if (layout.streams < 1 || layout.streams > kMaxStreams)
    return Error{fmt::format("{} streams per comm", layout.streams),
                 fmt::format("1 .. {}: NCCL's 128-byte handle holds that many connection handles", kMaxStreams)};
  std::vector<std::unique_ptr<FabricConnection>> streams;
  handle_out.assign(kHandleMaxSize, 0);
  for (std::uint32_t i = 0; i < layout.streams; ++i) {
    std::vector<std::uint8_t> h;
    auto c = FabricConnection::listen(options, h);
    if (!c) return Error{fmt::format("stream {}: {}", i, c.error().what), c.error().hint};
    if (h.size() > kHandleWireSize)
      return Error{fmt::format("stream {}: a connection handle of {} bytes; streams need at most {}", i, h.size(),
                               kHandleWireSize),
                   "run with HA_NCCL_STREAMS=1"};
    std::copy(h.begin(), h.end(), handle_out.begin() + static_cast<std::ptrdiff_t>(i * kHandleWireSize));
    streams.push_back(std::move(c).value());
  }
  const std::uint32_t key_id = key_id_of(options);
  for (std::size_t b = 0; b < 3; ++b) handle_out[kKeyIdOffset + b] = static_cast<std::uint8_t>(key_id >> (8 * b));
  if (layout.streams > 1) {
    handle_out[kStreamCountOffset] = static_cast<std::uint8_t>(kStripeLayoutVersion << 4 | layout.streams);
    put_u32(handle_out, kStripeBytesOffset, static_cast<std::uint32_t>(layout.min_bytes));
  }
  std::unique_ptr<StripedConnection> sc(new StripedConnection(layout, std::move(streams)));
  sc->start_pumps();
  return sc;
}

Result<std::unique_ptr<StripedConnection>> StripedConnection::connect(const FabricOptions& options,
                                                                      std::span<const std::uint8_t> handle) {
  if (handle.size() < kHandleMaxSize)
    return Error{fmt::format("connect: a handle of {} bytes", handle.size()),
                 fmt::format("NCCL hands over {}", kHandleMaxSize)};
  const std::uint32_t theirs = handle[kKeyIdOffset] | handle[kKeyIdOffset + 1] << 8 | handle[kKeyIdOffset + 2] << 16;
  const std::uint32_t ours = key_id_of(options);
  if (theirs != ours) {
    if (theirs == 0)
      return Error{"connect: the listener runs without a job key, this rank with one",
                   "give every rank the same RAILCHECK_JOB_KEY_FILE (docs/security.md)"};
    if (ours == 0)
      return Error{"connect: the listener authenticates its control messages, this rank has no job key",
                   "give every rank the same RAILCHECK_JOB_KEY_FILE (docs/security.md)"};
    return Error{
        fmt::format("connect: the listener holds another job key (key id ..{:06x}, ours ..{:06x})", theirs, ours),
        "give every rank the same RAILCHECK_JOB_KEY_FILE (docs/security.md)"};
  }
  StripeLayout layout;
  layout.streams = std::max<std::uint32_t>(1, handle[kStreamCountOffset] & 0x0FU);
  if (const std::uint32_t version = handle[kStreamCountOffset] >> 4U; layout.streams > 1 && version != kStripeLayoutVersion)
    return Error{fmt::format("connect: the listener cuts messages with stripe layout {}, this plugin with {}", version,
                             kStripeLayoutVersion),
                 "run the same plugin build on every rank, or HA_NCCL_STREAMS=1 on the listening side"};
  std::vector<std::unique_ptr<FabricConnection>> streams;
  if (layout.streams == 1) {
    // A one-stream handle is a connection handle, then zeros but for the key id: the connection
    // handle and those zeros go to its decoder, which checks them.
    std::vector<std::uint8_t> one(handle.begin(), handle.end());
    for (std::size_t b = 0; b < 3; ++b) one[kKeyIdOffset + b] = 0;
    auto c = FabricConnection::connect(options, one);
    if (!c) return c.error();
    streams.push_back(std::move(c).value());
  } else {
    if (layout.streams > kMaxStreams)
      return Error{fmt::format("connect: the handle names {} streams", layout.streams),
                   fmt::format("at most {}: the peer is not this plugin, or a newer one", kMaxStreams)};
    layout.min_bytes = get_u32(handle, kStripeBytesOffset);
    for (std::uint32_t i = 0; i < layout.streams; ++i) {
      auto c = FabricConnection::connect(options, handle.subspan(i * kHandleWireSize, kHandleWireSize));
      if (!c) return Error{fmt::format("stream {}: {}", i, c.error().what), c.error().hint};
      streams.push_back(std::move(c).value());
    }
  }
  std::unique_ptr<StripedConnection> sc(new StripedConnection(layout, std::move(streams)));
  sc->start_pumps();
  return sc;
}

void StripedConnection::start_pumps() {
  for (std::uint32_t i = 1; i < streams_.size(); ++i) tail(i).pump = std::thread([this, i] { pump(i); });
}

void StripedConnection::pump(std::uint32_t stream) {
  Tail& t = tail(stream);
  FabricConnection& conn = *streams_[stream];
  std::vector<Post> posts;
  std::vector<std::pair<std::uint64_t, RequestResult>> finished_now;
  std::unique_lock lock(t.mu);
  for (;;) {
    {
      std::lock_guard pl(t.post_mu);
      if (t.stop) return;
      posts.swap(t.posts);
    }
    // In the order handed over, which is message order on this stream.
    for (const Post& p : posts) {
      auto id = p.send ? conn.isend(p.data, p.len, p.tag, p.mr)
                       : conn.irecv(std::span<void* const>(&p.data, 1), std::span<const std::size_t>(&p.len, 1),
                                    std::span<const std::uint64_t>(&p.tag, 1), std::span<MemoryRegion* const>(&p.mr, 1));
      // A tail that cannot be posted fails its message (and NCCL aborts): the peer would wait
      // for it forever.
      if (!id)
        finished_now.emplace_back(p.token, RequestResult{false, {}, fmt::format("stream {}: {}", stream, id.error().what)});
      else
        t.pending.emplace_back(p.token, id.value());
    }
    posts.clear();
    conn.progress();
    for (auto it = t.pending.begin(); it != t.pending.end();) {
      if (auto r = conn.finished(it->second)) {
        finished_now.emplace_back(it->first, std::move(*r));
        it = t.pending.erase(it);
      } else {
        ++it;
      }
    }
    // An ack this stream owes as a receiver (delivery_ack_clock.hpp) goes out at the next wake
    // below, within kIdleProgress: no spinning for it.
    const bool owes_acks = conn.unacknowledged_sends() > 0;
    publish_tail_health(stream);
    if (!finished_now.empty()) {
      std::lock_guard done(t.done_mu);
      for (auto& f : finished_now) t.done.push_back(std::move(f));
      finished_now.clear();
    }
    if (t.pending.empty() && !owes_acks) {
      // Idle, but not asleep: what this end still owes its peer may sit in the provider's queue
      // (a delivery ack behind a socket full of data goes out only with a later progress call),
      // and the peer fails over on its soft RTO if it never goes (seen on the 2-core CI host).
      // The stream's lock is let go while it sleeps: the caller's handshakes and registrations.
      lock.unlock();
      {
        std::unique_lock pl(t.post_mu);
        t.wake.wait_for(pl, kIdleProgress, [&t] { return t.stop || !t.posts.empty(); });
      }
      lock.lock();
      continue;
    }
    // Let a waiting caller in between rounds: std::mutex is not fair, and a pump that took the
    // lock straight back would starve the caller's handshakes, registrations and cuts.
    lock.unlock();
    while (t.waiting.load(std::memory_order_acquire) > 0) std::this_thread::yield();
    lock.lock();
  }
}

std::uint64_t StripedConnection::hand_over(std::uint32_t stream, Post post) {
  Tail& t = tail(stream);
  post.token = ++next_token_;
  {
    std::lock_guard pl(t.post_mu);
    t.posts.push_back(post);
  }
  t.wake.notify_one();
  return post.token;
}

void StripedConnection::publish_tail_health(std::uint32_t stream) {
  Tail& t = tail(stream);
  t.failed.store(streams_[stream]->failed(), std::memory_order_release);
  t.failovers.store(streams_[stream]->failovers(), std::memory_order_release);
}

std::optional<RequestResult> StripedConnection::collect(std::uint32_t stream, std::uint64_t token) {
  Tail& t = tail(stream);
  std::lock_guard lock(t.done_mu);
  auto it = std::find_if(t.done.begin(), t.done.end(), [token](const auto& d) { return d.first == token; });
  if (it == t.done.end()) return std::nullopt;
  RequestResult r = std::move(it->second);
  t.done.erase(it);
  return r;
}

void StripedConnection::progress() {
  streams_[0]->progress();
  if (!all_ready_) {
    // Until every stream is ready the caller drives every handshake (the pumps sleep: no tails).
    auto locks = lock_all_tails();
    bool ready = streams_[0]->ready();
    for (std::uint32_t i = 1; i < streams_.size(); ++i) {
      streams_[i]->progress();
      ready = ready && streams_[i]->ready();
      publish_tail_health(i);
    }
    all_ready_ = ready;
  }
  resolve_heads();
}

bool StripedConnection::ready() const { return all_ready_; }

bool StripedConnection::failed() const {
  if (streams_[0]->failed()) return true;
  for (std::size_t i = 1; i < tails_.size(); ++i)
    if (tails_[i]->failed.load(std::memory_order_acquire)) return true;
  return false;
}

Result<StripedMemory*> StripedConnection::register_memory(void* addr, std::size_t len) {
  auto m = std::make_unique<StripedMemory>();
  auto locks = lock_all_tails();
  for (auto& s : streams_) {
    auto r = s->register_memory(addr, len);
    if (!r) {
      for (std::size_t i = 0; i < m->per_stream.size(); ++i) (void)streams_[i]->deregister_memory(m->per_stream[i]);
      return r.error();
    }
    m->per_stream.push_back(r.value());
  }
  memory_.push_back(std::move(m));
  return memory_.back().get();
}

Result<bool> StripedConnection::deregister_memory(StripedMemory* mr) {
  auto it = std::find_if(memory_.begin(), memory_.end(), [mr](const auto& m) { return m.get() == mr; });
  if (it == memory_.end()) return Error{"deregister_memory: not a region of this connection", ""};
  auto locks = lock_all_tails();
  for (std::size_t i = 0; i < streams_.size(); ++i) {
    auto r = streams_[i]->deregister_memory(mr->per_stream[i]);
    if (!r) return r.error();
  }
  memory_.erase(it);
  return true;
}

Result<RequestId> StripedConnection::isend(const void* data, std::size_t size, std::uint64_t tag, StripedMemory* mr) {
  if (mr == nullptr) return Error{"isend: the buffer's memory region is not registered here", ""};
  const auto chunks = send_chunks(layout_, size);
  const auto* bytes = static_cast<const std::byte*>(data);
  Request r;
  r.id = RequestId{++next_request_};
  r.send_size = size;
  auto head = streams_[0]->isend(bytes, chunks[0].length, tag, mr->per_stream[0]);
  if (!head) return head.error();
  r.head = head.value();
  for (std::size_t k = 1; k < chunks.size(); ++k) {
    const StripeChunk& c = chunks[k];
    // The pump posts it (and so copies it): a tail it cannot post fails the message.
    const std::uint64_t token =
        hand_over(c.stream, Post{.send = true,
                                 .data = const_cast<std::byte*>(bytes + c.offset),  // read only: a send
                                 .len = c.length,
                                 .tag = tag,
                                 .mr = mr->per_stream[c.stream]});
    r.tails.push_back(Part{c.stream, token, 0, false});
  }
  requests_.push_back(std::move(r));
  return requests_.back().id;
}

Result<RequestId> StripedConnection::irecv(std::span<void* const> data, std::span<const std::size_t> sizes,
                                           std::span<const std::uint64_t> tags, std::span<StripedMemory* const> mrs) {
  std::vector<MemoryRegion*> head_mrs;
  for (auto* m : mrs) {
    if (m == nullptr) return Error{"irecv: a buffer's memory region is not registered here", ""};
    head_mrs.push_back(m->per_stream[0]);
  }
  auto head = streams_[0]->irecv(data, sizes, tags, head_mrs);
  if (!head) return head.error();
  Request r;
  r.id = RequestId{++next_request_};
  r.head = head.value();
  r.may_stripe = std::any_of(sizes.begin(), sizes.end(), [this](std::size_t s) { return may_be_striped(layout_, s); });
  if (r.may_stripe) {
    r.data.assign(data.begin(), data.end());
    r.posted.assign(sizes.begin(), sizes.end());
    r.tags.assign(tags.begin(), tags.end());
    r.mrs.assign(mrs.begin(), mrs.end());
  }
  requests_.push_back(std::move(r));
  return requests_.back().id;
}

void StripedConnection::resolve_heads() {
  for (auto& r : requests_) {
    if (!r.may_stripe || r.head_done) continue;
    // Heads complete in message order on stream 0; the first one not in yet stops the walk, so
    // tails are posted in message order on every stream, as the sender posted them.
    auto head = streams_[0]->finished(r.head);
    if (!head) return;
    r.head_done = true;
    if (!head->ok) {
      r.error = head->error;
      continue;
    }
    r.sizes = head->sizes;
    for (std::uint32_t b = 0; b < r.sizes.size(); ++b) {
      for (const StripeChunk& c : tail_receives(layout_, r.sizes[b], r.posted[b])) {
        const std::uint64_t token = hand_over(c.stream, Post{.send = false,
                                                             .data = static_cast<std::byte*>(r.data[b]) + c.offset,
                                                             .len = c.length,
                                                             .tag = r.tags[b],
                                                             .mr = r.mrs[b]->per_stream[c.stream]});
        r.tails.push_back(Part{c.stream, token, b, false});
      }
    }
  }
}

std::optional<RequestResult> StripedConnection::finished(RequestId request) {
  resolve_heads();
  auto it = std::find_if(requests_.begin(), requests_.end(), [request](const Request& r) { return r.id == request; });
  if (it == requests_.end()) return RequestResult{false, {}, "not a request of this connection"};
  Request& r = *it;
  if (!r.head_done && !r.may_stripe) {
    auto head = streams_[0]->finished(r.head);
    if (!head) return std::nullopt;
    r.head_done = true;
    if (!head->ok) r.error = head->error;
    r.sizes = head->sizes;
  }
  if (!r.head_done) return std::nullopt;
  for (Part& p : r.tails) {
    if (p.done) continue;
    auto t = collect(p.stream, p.token);
    if (!t) return std::nullopt;
    p.done = true;
    if (!t->ok) {
      if (r.error.empty()) r.error = fmt::format("stream {}: {}", p.stream, t->error);
    } else if (!r.sizes.empty()) {
      r.sizes.at(p.buffer) += t->sizes.at(0);
    }
  }
  RequestResult out;
  out.ok = r.error.empty();
  out.error = r.error;
  // A send reports its whole size (the head's result names the head's bytes only).
  if (r.send_size) r.sizes = {*r.send_size};
  out.sizes = std::move(r.sizes);
  requests_.erase(it);
  return out;
}

void StripedConnection::cut_primary() {
  streams_[0]->cut_rail(PathIndex{0});
  for (std::uint32_t i = 1; i < streams_.size(); ++i) {
    TailLock lock(*this, i);
    streams_[i]->cut_rail(PathIndex{0});
  }
}

bool StripedConnection::standbys_ready() const {
  auto all_ready = [](const ConnectionStats& s) {
    return std::all_of(s.rails.begin(), s.rails.end(), [](const RailStats& r) { return r.ready; });
  };
  if (!all_ready(streams_[0]->stats())) return false;
  for (std::size_t i = 1; i < streams_.size(); ++i) {
    std::lock_guard lock(tails_[i]->mu);
    if (!all_ready(streams_[i]->stats())) return false;
  }
  return true;
}

std::uint32_t StripedConnection::failovers() const {
  std::uint32_t n = streams_[0]->failovers();
  for (std::size_t i = 1; i < tails_.size(); ++i) n += tails_[i]->failovers.load(std::memory_order_acquire);
  return n;
}

std::uint64_t StripedConnection::control_refused() const {
  std::uint64_t n = streams_[0]->control_refused();
  for (std::size_t i = 1; i < streams_.size(); ++i) {
    std::lock_guard lock(tails_[i]->mu);
    n += streams_[i]->control_refused();
  }
  return n;
}

ConnectionStats StripedConnection::stats() const {
  ConnectionStats st = streams_[0]->stats();
  for (std::size_t i = 1; i < streams_.size(); ++i) {
    ConnectionStats t;
    {
      std::lock_guard lock(tails_[i]->mu);
      t = streams_[i]->stats();
    }
    st.failovers += t.failovers;
    st.replayed += t.replayed;
    st.staged_early += t.staged_early;
    st.progress_calls += t.progress_calls;
    st.control_refused += t.control_refused;
    if (st.first_control_refusal.empty() && !t.first_control_refusal.empty())
      st.first_control_refusal = fmt::format("stream {}: {}", i, t.first_control_refusal);
    if (!st.first_failover_at || (t.first_failover_at && *t.first_failover_at < *st.first_failover_at)) {
      st.first_failover_at = t.first_failover_at;
      st.first_failover_why = fmt::format("stream {}: {}", i, t.first_failover_why);
    }
  }
  return st;
}

std::size_t StripedConnection::unacknowledged_sends() const { return streams_[0]->unacknowledged_sends(); }
bool StripedConnection::owes_delivery_ack() const { return streams_[0]->owes_delivery_ack(); }

}  // namespace railcheck::nccl
