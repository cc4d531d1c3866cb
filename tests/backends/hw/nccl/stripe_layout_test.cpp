// The stripe layout (stripe_layout.hpp): what the sender cuts and what the receiver, knowing only
// its buffer and the head's length, posts for the tails.
#include "backends/hw/nccl/stripe_layout.hpp"

#include <catch2/catch.hpp>
#include <cstddef>
#include <vector>

using namespace railcheck::nccl;

namespace {

// The chunks tile [0, size) in stream order, one per stream.
void require_tiling(const std::vector<StripeChunk>& chunks, std::size_t size, std::uint32_t streams) {
  REQUIRE(chunks.size() == streams);
  std::size_t next = 0;
  for (std::uint32_t i = 0; i < streams; ++i) {
    REQUIRE(chunks[i].stream == i);
    REQUIRE(chunks[i].offset == next);
    next += chunks[i].length;
  }
  REQUIRE(next == size);
}

}  // namespace

TEST_CASE("a message up to the stripe size is one chunk on stream 0", "[nccl][stripe]") {
  const StripeLayout l{3, 65536};
  for (std::size_t size : {std::size_t{0}, std::size_t{8}, std::size_t{65536}}) {
    const auto c = send_chunks(l, size);
    REQUIRE(c.size() == 1);
    CHECK(c[0].stream == 0);
    CHECK(c[0].length == size);
    CHECK(tail_receives(l, size, 1 << 20).empty());  // the receiver waits for no tail
  }
  // One stream never stripes, whatever the size.
  CHECK(send_chunks(StripeLayout{1, 65536}, 16 << 20).size() == 1);
  CHECK_FALSE(may_be_striped(StripeLayout{1, 65536}, 16 << 20));
  CHECK_FALSE(may_be_striped(l, 65536));
  CHECK(may_be_striped(l, 65537));
}

TEST_CASE("a large message is a short head on stream 0 and even, page-aligned tails on the others",
          "[nccl][stripe]") {
  const StripeLayout l{2, 65536};
  const auto c = send_chunks(l, 512 * 1024);
  require_tiling(c, 512 * 1024, 2);
  // The rest past 65537 bytes is 458751: one tail of 112 pages; the head says 112.
  CHECK(c[0].length == 65537 + 112);
  CHECK(c[1].length == 512 * 1024 - c[0].length);
  const auto three = send_chunks(StripeLayout{3, 65536}, 4 << 20);
  require_tiling(three, 4 << 20, 3);
  const std::size_t width = (three[0].length - 65537) * kStripeAlign;
  CHECK(three[1].length == width);  // the first tail is the full width
  CHECK(three[2].length <= width);
  CHECK(three[2].length + kStripeAlign > width);  // the second is short by less than a page
  // The receiver, from the head's length alone, posts each tail where the sender sent it.
  const auto t = tail_receives(StripeLayout{3, 65536}, three[0].length, 8 << 20);
  REQUIRE(t.size() == 2);
  CHECK(t[0].offset == three[1].offset);
  CHECK(t[0].length == width);
  CHECK(t[1].offset == three[2].offset);
}

TEST_CASE("a message just above the stripe size is its head alone, or its head and empty tails", "[nccl][stripe]") {
  const StripeLayout l{3, 65536};
  // min_bytes + 1: no width to give, so no tails on either side.
  const auto one = send_chunks(l, 65537);
  REQUIRE(one.size() == 1);
  CHECK(one[0].length == 65537);
  CHECK(tail_receives(l, 65537, 1 << 20).empty());
  // One byte more: a width of one page, all of it past the message: two empty tails travel.
  const auto c = send_chunks(l, 65538);
  require_tiling(c, 65538, 3);
  CHECK(c[0].length == 65538);
  CHECK(c[1].length == 0);
  CHECK(c[2].length == 0);
  const auto t = tail_receives(l, 65538, 1 << 20);
  REQUIRE(t.size() == 2);
  CHECK(t[0].stream == 1);
  CHECK(t[1].stream == 2);
}

TEST_CASE("the receiver's tail receives hold the sender's chunks for every size and buffer", "[nccl][stripe]") {
  // Every (streams, stripe size, message size, posted size) of a grid around the boundaries:
  // the head the receiver sees is the sender's chunk 0, and each tail it posts on stream i starts
  // where the sender's chunk i starts and is at least as long (a shorter message lands in a longer
  // receive; never the other way round).
  for (std::uint32_t streams : {2U, 3U}) {
    for (std::size_t min : {std::size_t{4096}, std::size_t{65536}}) {
      const StripeLayout l{streams, min};
      std::vector<std::size_t> sizes;
      for (std::size_t base : {min, 2 * min, 3 * min, std::size_t{1} << 20, std::size_t{3} << 20})
        for (std::size_t d : {0, 1, 2, 4095, 4096, 4097})
          for (std::size_t s : {base - std::min(base, d), base + d}) sizes.push_back(s);
      for (std::size_t size : sizes) {
        const auto sent = send_chunks(l, size);
        const std::size_t head = sent[0].length;
        for (std::size_t extra : {std::size_t{0}, std::size_t{1}, std::size_t{4096}, std::size_t{1} << 20}) {
          const std::size_t posted = size + extra;
          INFO("streams " << streams << " stripe " << min << " size " << size << " posted " << posted);
          const auto tails = tail_receives(l, head, posted);
          if (sent.size() == 1) {
            REQUIRE(tails.empty());
            continue;
          }
          REQUIRE(head <= min + 1 + (std::size_t{4} << 20) / kStripeAlign);  // a short head, always
          REQUIRE(tails.size() == sent.size() - 1);
          for (std::size_t k = 0; k < tails.size(); ++k) {
            const StripeChunk& s = sent[k + 1];
            const StripeChunk& r = tails[k];
            REQUIRE(r.stream == s.stream);
            if (s.length == 0) continue;  // an empty chunk lands anywhere
            REQUIRE(r.offset == s.offset);
            REQUIRE(r.length >= s.length);
            REQUIRE(r.offset + r.length <= posted);
          }
        }
      }
    }
  }
}
