#include "backends/hw/nccl/stripe_layout.hpp"

#include <algorithm>

#include "engine/core/engine_assert.hpp"

namespace railcheck::nccl {
namespace {

std::size_t chunk_size(const StripeLayout& l, std::size_t size) {
  const std::size_t even = (size + l.streams - 1) / l.streams;
  const std::size_t aligned = (even + kStripeAlign - 1) / kStripeAlign * kStripeAlign;
  return std::max(l.min_bytes + 1, aligned);
}

// Chunks 1..N-1 of width `c` over [0, limit).
void append_tails(const StripeLayout& l, std::size_t c, std::size_t limit, std::vector<StripeChunk>& out) {
  for (std::uint32_t i = 1; i < l.streams; ++i) {
    const std::size_t begin = std::min(limit, std::size_t{i} * c);
    const std::size_t end = std::min(limit, std::size_t{i + 1} * c);
    out.push_back(StripeChunk{i, begin, end - begin});
  }
}

}  // namespace

std::vector<StripeChunk> send_chunks(const StripeLayout& l, std::size_t size) {
  RAILCHECK_ASSERT(l.streams >= 1 && l.streams <= kMaxStreams, "1 .. kMaxStreams streams");
  if (!may_be_striped(l, size)) return {StripeChunk{0, 0, size}};
  const std::size_t c = chunk_size(l, size);
  RAILCHECK_ASSERT(c * l.streams >= size, "the chunks cover the message");
  std::vector<StripeChunk> out{StripeChunk{0, 0, std::min(c, size)}};
  append_tails(l, c, size, out);
  return out;
}

std::vector<StripeChunk> tail_receives(const StripeLayout& l, std::size_t head, std::size_t posted) {
  RAILCHECK_ASSERT(head <= posted, "the head fits the posted buffer");
  if (!may_be_striped(l, head)) return {};
  std::vector<StripeChunk> out;
  append_tails(l, head, posted, out);
  return out;
}

}  // namespace railcheck::nccl
