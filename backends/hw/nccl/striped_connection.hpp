#pragma once
// One NCCL comm's transport: `streams` FabricConnections to the same peer, a message above the
// stripe size cut across them (stripe_layout.hpp), as NCCL's Socket transport stripes a request
// over several sockets and helper threads (issue 42: one stream per comm was the plugin's large-
// message limit, and a second stream only helps when another thread moves its bytes).
//
// Streams: stream 0 carries every small message and the short head of every striped one; it is
// progressed by NCCL's proxy thread (the plugin's test()). Each tail stream 1..N-1 has a pump
// thread of its own, which spins while its tails are outstanding or owe delivery acks and
// progresses them every millisecond otherwise. The pump also posts its stream's tails (the
// caller hands them over, Tail::Post): a post copies whatever has already arrived, so the thread
// that posts is the thread that copies, and a large message's tails are copied on N-1 threads at
// once, as Socket's helper threads copy their sockets' shares (docs/nccl-plugin.md, "Streams on
// net"). With one stream there is no pump and nothing but stream 0.
//
// Exactly once, in order, across failovers: each stream is a whole HA connection (its own rails,
// in-flight table, failover and replay), so each chunk is delivered exactly once and in order on
// its stream; a message is complete when every chunk is. Receives match in posting order on each
// stream: the receiver posts a message's head on stream 0 when NCCL posts the receive, and its
// tails once that head has arrived, in the order the heads arrive, which is message order (the
// sender posts its tails in message order too). A fault that cuts "the primary rail" cuts rail 0
// of every stream (the NIC under them all).
//
// Threading: one caller at a time (the comm's mutex), plus the pumps. Tail stream i's
// FabricConnection is guarded by its Tail's mutex: its pump holds it while it posts and
// progresses and lets go between rounds, waiting while the caller asks for it (Tail::waiting:
// handshakes, memory registration, a cut, stats). Tails go to the pump through Tail::posts and
// come back through Tail::done, each under a mutex of its own that no one holds across a copy, so
// the caller never waits out a pump's copy. Lock order: the comm's mutex, then the tails' mutexes
// in stream order, then a post_mu or done_mu.
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "backends/hw/libfabric/fabric_connection.hpp"
#include "backends/hw/nccl/stripe_layout.hpp"

namespace railcheck::nccl {

// A user buffer registered on every stream (what NCCL holds as an mhandle).
struct StripedMemory {
  std::vector<MemoryRegion*> per_stream;
};

// The plugin's 128-byte handle: stream i's connection handle (kHandleWireSize = 40 bytes) at
// 40*i, then at 120 the stream count and at 124 the stripe size (LE u32). With one stream bytes
// 40..127 are zero: the handle of a plugin without streams, which such a peer still accepts.
// At 121..123: the low 24 bits of the listener's job key id (0: no key), so that a connector
// holding another key fails at once with one line instead of waiting for answers the listener
// refuses (issue 46); the key id is a MAC output and says nothing about the key.
// The byte at 120 holds the stream count in its low 4 bits and, with several streams, the
// stripe layout's version in its high 4 (kStripeLayoutVersion): both ends must cut a message
// alike, so a peer with another layout fails at connect with one line instead of misplacing bytes
// (a plugin from before the versions reads 0x13 as 19 streams and refuses it).
constexpr std::size_t kStreamCountOffset = 120;
constexpr std::uint8_t kStripeLayoutVersion = 1;  // 1: the short head (stripe_layout.hpp, 2026-11-28)
constexpr std::size_t kKeyIdOffset = 121;
constexpr std::size_t kStripeBytesOffset = 124;

class StripedConnection {
 public:
  // Receiver: opens every stream and writes the handle (128 bytes) into handle_out. The layout is
  // the listener's choice; the connecting side takes it from the handle.
  static Result<std::unique_ptr<StripedConnection>> listen(const FabricOptions& options, const StripeLayout& layout,
                                                           std::vector<std::uint8_t>& handle_out);
  // Sender: decodes the handle and starts every stream's handshake. Never blocks.
  static Result<std::unique_ptr<StripedConnection>> connect(const FabricOptions& options,
                                                            std::span<const std::uint8_t> handle);
  ~StripedConnection();
  StripedConnection(const StripedConnection&) = delete;
  StripedConnection& operator=(const StripedConnection&) = delete;

  // Progresses stream 0 (every stream until all are ready), then posts the tails of striped
  // messages whose heads arrived.
  void progress();
  bool ready() const;
  bool failed() const;

  Result<StripedMemory*> register_memory(void* addr, std::size_t len);
  Result<bool> deregister_memory(StripedMemory* mr);
  Result<RequestId> isend(const void* data, std::size_t size, std::uint64_t tag, StripedMemory* mr);
  Result<RequestId> irecv(std::span<void* const> data, std::span<const std::size_t> sizes,
                          std::span<const std::uint64_t> tags, std::span<StripedMemory* const> mrs);
  // The request's result once every chunk finished (the request is forgotten then); never
  // progresses (FabricConnection::finished).
  std::optional<RequestResult> finished(RequestId request);

  // Fault injection: rail 0 of every stream dies (FabricConnection::cut_rail).
  void cut_primary();
  // Whether every rail of every stream is Ready (a standby: its handshake's phase 2 done), so a cut
  // has somewhere to fail over to.
  bool standbys_ready() const;
  // Failovers completed, summed over the streams.
  std::uint32_t failovers() const;
  // Control messages refused on every stream (issue 46); stream 0's alone without a lock.
  std::uint64_t control_refused() const;
  // Stream 0's figures, with failovers and replayed WRs summed over the streams.
  ConnectionStats stats() const;
  // Stream 0's staged sends not yet acknowledged (the background thread's business); the tails'
  // are the pump's, which keeps progressing them until they are acknowledged.
  std::size_t unacknowledged_sends() const;
  // Stream 0 holds deliveries it has not acknowledged (the tails' pumps progress theirs).
  bool owes_delivery_ack() const;
  const StripeLayout& layout() const { return layout_; }
  // Stream 0, which only the caller touches (the tails are the pump's): its progress calls and
  // staged sends, for tests that count them.
  FabricConnection& head_stream() { return *streams_[0]; }

 private:
  struct Part {
    std::uint32_t stream = 0;
    std::uint64_t token = 0;   // the caller's name for it (its pump posts it: Tail::Post)
    std::uint32_t buffer = 0;  // which buffer of a grouped receive
    bool done = false;
  };
  struct Request {
    RequestId id{};
    RequestId head{};                      // on stream 0
    std::optional<std::size_t> send_size;  // a send: its whole size, reported when done
    bool head_done = false;
    bool may_stripe = false;  // a receive with a buffer larger than the stripe size
    std::vector<Part> tails;
    std::vector<std::size_t> sizes;  // per buffer: the head's, then plus each tail's
    std::vector<void*> data;         // receiver: where the tails go
    std::vector<std::size_t> posted;
    std::vector<std::uint64_t> tags;
    std::vector<StripedMemory*> mrs;
    std::string error;
  };
  // A tail the caller hands to its stream's pump, which posts it: on net (and tcp) a receive
  // posted for bytes already waiting reads them inside fi_recv (xnet_srx_msg), and a send writes
  // what the socket takes inside fi_senddata, so whichever thread posts a tail copies it. Posted
  // by the caller (NCCL's proxy thread), every tail was copied on that one thread.
  struct Post {
    std::uint64_t token = 0;
    bool send = false;
    void* data = nullptr;
    std::size_t len = 0;
    std::uint64_t tag = 0;
    MemoryRegion* mr = nullptr;
  };
  // One tail stream's pump and what guards it. The caller never waits out a pump's copy: it
  // hands tails over through `posts` (under post_mu, which the pump holds only to take them or to
  // sleep) and learns which finished from `done` (under done_mu, which the pump holds only to add
  // to it); `mu` (the stream's FabricConnection) it takes only for the handshakes, memory
  // registration, a cut and the stats.
  struct Tail {
    mutable std::mutex mu;
    std::atomic<std::uint32_t> waiting{0};                     // callers waiting for mu
    std::vector<std::pair<std::uint64_t, RequestId>> pending;  // posted, not yet finished (mu)
    std::mutex post_mu;
    std::condition_variable wake;  // with post_mu: posts arrived, or stop
    std::vector<Post> posts;       // (post_mu)
    bool stop = false;             // (post_mu)
    std::mutex done_mu;
    std::vector<std::pair<std::uint64_t, RequestResult>> done;  // finished, not yet collected (done_mu)
    std::atomic<bool> failed{false};                            // no usable rail left
    std::atomic<std::uint32_t> failovers{0};
    std::thread pump;
  };
  // Holds one tail stream's mutex, telling its pump a caller waits for it.
  class TailLock {
   public:
    TailLock(StripedConnection& c, std::uint32_t stream);

   private:
    std::unique_lock<std::mutex> lock_;
  };
  // Every tail stream's mutex, in stream order.
  std::vector<TailLock> lock_all_tails();

  StripedConnection(StripeLayout layout, std::vector<std::unique_ptr<FabricConnection>> streams);
  void start_pumps();
  void pump(std::uint32_t stream);
  // Receiver: takes heads that arrived, in posting order, and posts their tails.
  void resolve_heads();
  // Called with the stream's mutex held: what the caller reads without it.
  void publish_tail_health(std::uint32_t stream);
  // Hands a tail to its stream's pump; returns its token.
  std::uint64_t hand_over(std::uint32_t stream, Post post);
  // The part's result if its pump has seen it finish (then forgotten); never waits for a pump.
  std::optional<RequestResult> collect(std::uint32_t stream, std::uint64_t token);
  Tail& tail(std::uint32_t stream) { return *tails_[stream]; }

  StripeLayout layout_;
  std::vector<std::unique_ptr<FabricConnection>> streams_;
  std::deque<Request> requests_;  // in posting order
  std::vector<std::unique_ptr<StripedMemory>> memory_;
  std::uint64_t next_request_ = 0;
  std::uint64_t next_token_ = 0;
  bool all_ready_ = false;

  std::vector<std::unique_ptr<Tail>> tails_;  // by stream; [0] is null (stream 0 is the caller's)
};

}  // namespace railcheck::nccl
