#pragma once
// How one NCCL message is cut across a comm's streams (issue 42): the comm holds `streams`
// FabricConnections to its peer (each a full HA connection with its own rails and failover),
// and a message larger than `min_bytes` goes out as one chunk per stream, so its bytes move on
// several TCP connections at once, as NCCL's Socket transport stripes a request over
// NCCL_NSOCKS_PERTHREAD x NCCL_SOCKET_NTHREADS sockets (src/transport/net_socket.cc).
//
// The receiver posts a buffer of `posted` bytes without knowing the sender's size; Socket sends
// the size first on a control socket. Here no extra message is needed: the head chunk's length
// says everything the receiver must know, and the head is short, so the receiver learns it at
// once and posts the tails while their bytes are still arriving.
//   * A message of at most min_bytes is one chunk on stream 0 (every small message: its cost is
//     exactly that of a single stream).
//   * A larger message of S bytes: the head, on stream 0, is its first h = min_bytes + 1 + c/A
//     bytes (A = kStripeAlign), where c is the tails' width: the rest past min_bytes + 1 spread
//     over streams 1..N-1, rounded up to A. Tail i (stream i) is [h + (i-1)c, h + ic) clipped to
//     [0, S), possibly empty (an empty tail still travels, as a zero-length message, so every
//     tail stream sees one message per striped send). S = min_bytes + 1 gives c = 0: the head
//     alone, no tails.
//   * The receiver posts its whole buffer on stream 0. A head of at most min_bytes means the
//     message was not striped; a longer one of h bytes gives c = (h - min_bytes - 1) * A, and the
//     receiver posts tail i at [h + (i-1)c, h + ic) clipped to its buffer, which holds the sender's
//     tail i since S <= posted.
// Until 2026-11-28 the head was a full 1/N of the message, copied by NCCL's proxy thread, and the
// tails could be posted only once it had landed (issue 42, docs/nccl-plugin.md).
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
