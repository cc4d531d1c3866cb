#pragma once
// How one NCCL message is cut across a comm's streams (issue 42): the comm holds `streams`
// FabricConnections to its peer (each a full HA connection with its own rails and failover),
// and a message larger than `min_bytes` goes out as one chunk per stream, so its bytes move on
// several TCP connections at once, as NCCL's Socket transport stripes a request over
// NCCL_NSOCKS_PERTHREAD x NCCL_SOCKET_NTHREADS sockets (src/transport/net_socket.cc).
//
// The receiver posts a buffer of `posted` bytes without knowing the sender's size; Socket sends
// the size first on a control socket. Here no extra message is needed: the layout is chosen so
// that the head chunk's received length says everything the receiver must know.
//   * A message of at most min_bytes is one chunk on stream 0 (every small message: its cost is
//     exactly that of a single stream).
//   * A larger message of S bytes is N chunks of c = max(min_bytes + 1, S/N rounded up to
//     kStripeAlign) bytes: chunk i is [i*c, (i+1)*c) clipped to [0, S) on stream i (possibly
//     empty: N*c >= S always, and the last chunks of a message just above min_bytes are empty;
//     an empty chunk still travels, as a zero-length message, so every stream sees one message
//     per striped send).
//   * The receiver posts its whole buffer on stream 0. A head of at most min_bytes means the
//     message was not striped. A longer head means it was, and its length h is either c (then
//     the tails sit at i*h) or S itself (S < c: every tail is empty, so where they land does
//     not matter); either way the receiver posts tail i on stream i at [i*h, (i+1)*h) clipped
//     to its buffer, which holds the sender's chunk i since S <= posted.
// Both ends must use the same (streams, min_bytes): the listener chooses them and the handle
// carries them to the connecting side (striped_connection.hpp).
#include <cstddef>
#include <cstdint>
#include <vector>

namespace railcheck::nccl {

constexpr std::uint32_t kMaxStreams = 3;            // three 40-byte connection handles fill NCCL's 128
constexpr std::size_t kStripeAlign = 4096;          // chunk boundaries on pages: copies stay aligned
constexpr std::size_t kDefaultStripeBytes = 65536;  // NCCL_SOCKET_MIN_TASKSIZE's default

struct StripeLayout {
  std::uint32_t streams = 1;
  std::size_t min_bytes = kDefaultStripeBytes;  // messages up to this size are not striped
};

struct StripeChunk {
  std::uint32_t stream = 0;
  std::size_t offset = 0;
  std::size_t length = 0;
};

// The sender's chunks of a `size`-byte message, stream 0 first: one chunk or `streams` chunks.
std::vector<StripeChunk> send_chunks(const StripeLayout& l, std::size_t size);

// The receiver, once stream 0 delivered `head` bytes into a buffer of `posted` bytes: the tail
// chunks to post on streams 1..N-1 (empty when the message was not striped).
std::vector<StripeChunk> tail_receives(const StripeLayout& l, std::size_t head, std::size_t posted);

// Whether a receive of `posted` bytes can receive a striped message at all (else it never
// waits for tails).
inline bool may_be_striped(const StripeLayout& l, std::size_t posted) { return l.streams > 1 && posted > l.min_bytes; }

}  // namespace railcheck::nccl
