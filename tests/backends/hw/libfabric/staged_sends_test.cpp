// StagedSends: the copies behind sends that complete before their delivery ack
// (staged_sends.hpp). No libfabric here.
#include "backends/hw/libfabric/staged_sends.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <vector>

using namespace railcheck;
using railcheck::fabric::StagedSends;

namespace {

std::uint64_t addr(const std::byte* p) { return reinterpret_cast<std::uint64_t>(p); }

}  // namespace

TEST_CASE("a staged send is a copy: the user's buffer may change once it is staged", "[fabric][staging]") {
  StagedSends st(4, 64);
  std::vector<std::uint8_t> user(64, 0x5a);
  auto copy = st.stage(RequestId{1}, user.data(), user.size());
  REQUIRE(copy.has_value());
  std::memset(user.data(), 0xee, user.size());
  for (std::size_t i = 0; i < 64; ++i) REQUIRE(std::to_integer<std::uint8_t>((*copy)[i]) == 0x5a);
  CHECK(st.in_use() == 1);
  REQUIRE(st.arena() != nullptr);
  CHECK(addr(*copy) >= addr(st.arena()));
  CHECK(addr(*copy) + 64 <= addr(st.arena()) + st.arena_bytes());
}

TEST_CASE("a staged send is reported once: at its first local completion, not again at its ack", "[fabric][staging]") {
  StagedSends st(2, 16);
  const char data[8] = "abcdefg";
  auto copy = st.stage(RequestId{7}, data, sizeof data);
  REQUIRE(copy.has_value());
  const auto first = st.sent_locally(addr(*copy));
  REQUIRE(first.has_value());
  CHECK(*first == RequestId{7});
  // A replay of it completing locally on another rail reports nothing new.
  CHECK_FALSE(st.sent_locally(addr(*copy)).has_value());
  CHECK(st.in_use() == 1);  // the copy stays until the ack
  CHECK(st.completed(RequestId{7}) == StagedSends::Outcome::AlreadyReported);
  CHECK(st.in_use() == 0);
  // Its slot is free: a local completion naming it now (a stale one) reports nothing.
  CHECK_FALSE(st.sent_locally(addr(*copy)).has_value());
}

TEST_CASE("a staged send the engine completes before its local completion is read is reported then",
          "[fabric][staging]") {
  StagedSends st(1, 16);
  const char data[4] = "xyz";
  auto copy = st.stage(RequestId{3}, data, sizeof data);
  REQUIRE(copy.has_value());
  CHECK(st.completed(RequestId{3}) == StagedSends::Outcome::ReportNow);
  CHECK_FALSE(st.sent_locally(addr(*copy)).has_value());
  CHECK(st.completed(RequestId{4}) == StagedSends::Outcome::NotStaged);
}

TEST_CASE("a send too large, or with every slot taken, is not staged, and a freed slot is reused", "[fabric][staging]") {
  StagedSends st(2, 32);
  std::vector<std::uint8_t> big(33, 1), small(32, 2);
  CHECK_FALSE(st.stage(RequestId{1}, big.data(), big.size()).has_value());
  CHECK(st.arena() == nullptr);  // nothing staged yet: nothing allocated
  auto a = st.stage(RequestId{2}, small.data(), small.size());
  auto b = st.stage(RequestId{3}, small.data(), 0);  // zero bytes still takes a slot
  REQUIRE(a.has_value());
  REQUIRE(b.has_value());
  CHECK(*a != *b);
  CHECK_FALSE(st.stage(RequestId{4}, small.data(), small.size()).has_value());
  CHECK(st.completed(RequestId{2}) == StagedSends::Outcome::ReportNow);
  auto c = st.stage(RequestId{5}, small.data(), small.size());
  REQUIRE(c.has_value());
  CHECK(*c == *a);
  CHECK(st.sent_locally(addr(*c)) == std::optional<RequestId>{RequestId{5}});
}

TEST_CASE("staging off: no slots or no bytes stages nothing", "[fabric][staging]") {
  const char data[1] = {0};
  StagedSends none(0, 64), empty(8, 0);
  CHECK_FALSE(none.stage(RequestId{1}, data, 0).has_value());
  CHECK_FALSE(empty.stage(RequestId{1}, data, 0).has_value());
  CHECK(none.completed(RequestId{1}) == StagedSends::Outcome::NotStaged);
}
