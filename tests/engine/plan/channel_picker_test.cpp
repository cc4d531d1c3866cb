// The least-loaded channel picker (engine/plan/channel_picker.hpp) against choices worked out
// by hand from NCCL 2.18 addCollToPlan's loop, including its unsorted result and tie rule.
#include "engine/plan/channel_picker.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

namespace railcheck::plan {
namespace {

std::vector<std::uint32_t> pick(std::vector<std::uint64_t> loads, std::uint32_t n_bid) {
  return pick_least_loaded(loads, n_bid);
}

TEST_CASE("equal loads pick the lowest channels in index order", "[plan][picker]") {
  CHECK(pick({0, 0, 0, 0}, 1) == std::vector<std::uint32_t>{0});
  CHECK(pick({0, 0, 0, 0}, 2) == std::vector<std::uint32_t>{0, 1});
  CHECK(pick({2, 2, 2, 2}, 4) == std::vector<std::uint32_t>{0, 1, 2, 3});
}

TEST_CASE("a later channel replaces the current maximum only when strictly lighter", "[plan][picker]") {
  // least=[0], max 4; ch1 (1) replaces it; ch2 (1) is not lighter than 1; ch3 (0) replaces.
  CHECK(pick({4, 1, 1, 0}, 1) == std::vector<std::uint32_t>{3});
  CHECK(pick({1, 1, 0, 1}, 1) == std::vector<std::uint32_t>{2});
}

TEST_CASE("the picked set comes back in least[] order, not sorted", "[plan][picker]") {
  // least=[0,1], max at 0 (5); ch2 (3) replaces slot 0 -> [2,1]; the max is then slot 0 (3,
  // ties keep the first); ch3 (1) replaces slot 0 -> [3,1].
  CHECK(pick({5, 3, 3, 1}, 2) == std::vector<std::uint32_t>{3, 1});
}

TEST_CASE("asking for every channel returns every channel", "[plan][picker]") {
  CHECK(pick({9, 1, 5}, 3) == std::vector<std::uint32_t>{0, 1, 2});
}

}  // namespace
}  // namespace railcheck::plan
