#include "engine/imm/imm_counter.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <numeric>
#include <vector>

#include "engine/core/rng.hpp"

using namespace railcheck;
using namespace railcheck::imm;

TEST_CASE("an expectation completes exactly once, on its last arrival, under shuffled arrivals") {
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    INFO("seed " << seed);
    SeededRng rng(seed);
    // Three transfers (imm 7, 8, 9) of 1..12 writes each, arrivals interleaved in a random order,
    // the expectation registered at a random point in the stream.
    std::vector<std::uint32_t> counts = {static_cast<std::uint32_t>(1 + rng.below(12)),
                                         static_cast<std::uint32_t>(1 + rng.below(12)),
                                         static_cast<std::uint32_t>(1 + rng.below(12))};
    std::vector<std::uint32_t> stream;
    for (std::uint32_t t = 0; t < 3; ++t) stream.insert(stream.end(), counts[t], 7 + t);
    for (std::size_t i = stream.size(); i > 1; --i) std::swap(stream[i - 1], stream[rng.below(i)]);
    const std::size_t expect_at = rng.below(stream.size() + 1);

    ImmCounter c;
    std::vector<int> fired(3, 0);
    std::vector<std::uint32_t> seen(3, 0);
    auto note = [&](std::uint32_t t, ImmEvent e) {
      if (e == ImmEvent::Completed) {
        ++fired[t];
        CHECK(seen[t] == counts[t]);  // only after every write landed
      }
      CHECK(e != ImmEvent::OverArrival);
    };
    for (std::size_t i = 0; i <= stream.size(); ++i) {
      if (i == expect_at)
        for (std::uint32_t t = 0; t < 3; ++t) {
          auto r = c.expect(7 + t, counts[t]);
          REQUIRE(r.ok());
          note(t, r.value());
        }
      if (i == stream.size()) break;
      const std::uint32_t t = stream[i] - 7;
      ++seen[t];
      note(t, c.on_arrival(stream[i]));
    }
    CHECK(fired == std::vector<int>{1, 1, 1});
    CHECK(c.audit().empty());
  }
}

TEST_CASE("an arrival after completion is an over-arrival, reported at once") {
  ImmCounter c;
  REQUIRE(c.expect(5, 2).value() == ImmEvent::Waiting);
  CHECK(c.on_arrival(5) == ImmEvent::Waiting);
  CHECK(c.on_arrival(5) == ImmEvent::Completed);
  CHECK(c.on_arrival(5) == ImmEvent::OverArrival);
  CHECK(c.over_arrivals() == 1);
  CHECK(c.completed(5));
}

TEST_CASE("more held arrivals than the expectation asks for is an over-arrival at expect") {
  ImmCounter c;
  for (int i = 0; i < 4; ++i) CHECK(c.on_arrival(9) == ImmEvent::Held);
  CHECK(c.expect(9, 3).value() == ImmEvent::OverArrival);
  CHECK(c.over_arrivals() == 1);
}

TEST_CASE("an expectation that can never complete is reported by the audit") {
  ImmCounter c;
  REQUIRE(c.expect(1, 4).ok());
  c.on_arrival(1);
  c.on_arrival(2);  // nobody expects imm 2
  const auto gaps = c.audit();
  REQUIRE(gaps.size() == 2);
  CHECK(gaps[0].imm == 1);
  CHECK(gaps[0].expected == 4);
  CHECK(gaps[0].arrived == 1);
  CHECK(gaps[1].imm == 2);
  CHECK(gaps[1].expected == 0);
}

TEST_CASE("bad expectations are errors: zero writes, a value already awaited, a retired value") {
  ImmCounter c;
  CHECK_FALSE(c.expect(3, 0).ok());
  REQUIRE(c.expect(3, 1).ok());
  CHECK_FALSE(c.expect(3, 1).ok());
  CHECK(c.on_arrival(3) == ImmEvent::Completed);
  CHECK_FALSE(c.expect(3, 1).ok());
  CHECK_FALSE(c.release(4).ok());
  REQUIRE(c.release(3).ok());
  CHECK(c.expect(3, 1).value() == ImmEvent::Waiting);
}
