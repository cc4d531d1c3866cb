#include "backends/hw/nccl/stripe_layout.hpp"

#include <algorithm>

#include "engine/core/engine_assert.hpp"

namespace railcheck::nccl {
namespace {

// The tails' width for a message of `size` > min_bytes: the bytes past the smallest head
// (min_bytes + 1) spread evenly over streams 1..N-1, rounded up to kStripeAlign.
std::size_t tail_width(const StripeLayout& l, std::size_t size) {
  const std::size_t rest = size - (l.min_bytes + 1);
  const std::size_t per_tail = (rest + l.streams - 2) / (l.streams - 1);
  return (per_tail + kStripeAlign - 1) / kStripeAlign * kStripeAlign;
}

// Tails 1..N-1 of width `c` from `from` on, clipped to [0, limit).
void append_tails(const StripeLayout& l, std::size_t from, std::size_t c, std::size_t limit,
                  std::vector<StripeChunk>& out) {
  for (std::uint32_t i = 1; i < l.streams; ++i) {
    const std::size_t begin = std::min(limit, from + std::size_t{i - 1} * c);
    const std::size_t end = std::min(limit, from + std::size_t{i} * c);
    out.push_back(StripeChunk{i, begin, end - begin});
  }
}

}  // namespace

std::vector<StripeChunk> send_chunks(const StripeLayout& l, std::size_t size) {
  RAILCHECK_ASSERT(l.streams >= 1 && l.streams <= kMaxStreams, "1 .. kMaxStreams streams");
  if (!may_be_striped(l, size)) return {StripeChunk{0, 0, size}};
  const std::size_t c = tail_width(l, size);
  const std::size_t head = l.min_bytes + 1 + c / kStripeAlign;
  // c / kStripeAlign <= rest whenever rest >= 1 (and c = 0 when rest = 0): the head fits.
  RAILCHECK_ASSERT(head <= size, "the head fits the message");
  if (c == 0) return {StripeChunk{0, 0, size}};  // min_bytes + 1 bytes: the head alone
  std::vector<StripeChunk> out{StripeChunk{0, 0, head}};
  append_tails(l, head, c, size, out);
  RAILCHECK_ASSERT(out.back().offset + out.back().length == size, "the chunks cover the message");
  return out;
}

std::vector<StripeChunk> tail_receives(const StripeLayout& l, std::size_t head, std::size_t posted) {
  RAILCHECK_ASSERT(head <= posted, "the head fits the posted buffer");
  if (!may_be_striped(l, head)) return {};
  // The head's length past min_bytes + 1 is the tails' width in pages (send_chunks).
  const std::size_t c = (head - l.min_bytes - 1) * kStripeAlign;
  if (c == 0) return {};
  std::vector<StripeChunk> out;
  append_tails(l, head, c, posted, out);
  return out;
}

}  // namespace railcheck::nccl
