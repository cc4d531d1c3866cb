#pragma once
// Max-min fair sharing of one bipartite set of links (moe_fluid.cpp): up links (the senders') and
// down links (the receivers'), every flow crossing exactly one of each, every link of the same
// bound, every flow of the same weight. A flat MoE phase over the NICs is one such set (every rank
// to nearly every rank); one node's NVLink is another.
//
// The rates are SimGrid's saturation loop (maxmin_solve): the link of least remaining / open
// flows saturates, its open flows are fixed at that level, and each takes its share off its other
// link. What differs is how the next link is found. A landing changes two links' counts, and the
// order in which the links saturate barely moves, so the last solve's order is the guess: its next
// link's level is checked against every link still open in one multiply-compare pass (no
// division), and only a link found below it (one the change moved earlier) is looked at exactly.
// A side needs no check while its lower bound on open links' ratios (kept from its last check:
// in this loop a link's ratio only grows) is above the guess. Each step is then one pass over the
// other side (its flows with the saturated link, a dense row of counts), in vector registers:
// O(links) per step and O(links^2) per solve, whatever the flows in flight. The figures equal the
// saturation loop's within rounding (the order of the floating operations differs: within 1e-9
// relative, docs/routing.md).
//
// A flow's rate is the level of whichever of its links saturated first: its bottleneck. solve()
// reports every pair of links (up, down) whose bottleneck changed since the last solve, so the
// caller moves only those flows (an insertion sort of the old order into the new: each swap is one
// changed pair).
#include <cstdint>
#include <limits>
#include <vector>

namespace railcheck::sim {

class BipartiteSharing {
 public:
  static constexpr std::uint32_t kNever = std::numeric_limits<std::uint32_t>::max();

  BipartiteSharing(std::uint32_t ups, std::uint32_t downs, double bound);

  // Commands: a flow from up link `up` to down link `down` joins the sharing, or leaves it.
  void add(std::uint32_t up, std::uint32_t down);
  void remove(std::uint32_t up, std::uint32_t down);

  // Solves the sharing of the flows present now; then calls on_flip(up, down) for every pair
  // (up, down) holding at least one flow whose bottleneck is not the one the last solve gave (a
  // pair that had no flow then is reported only if its order changed: the caller checks).
  template <class OnFlip>
  void solve(OnFlip&& on_flip) {
    saturate();
    reorder(on_flip);
    if (++solves_ % kRenumberEvery == 0) renumber();
  }

  // Getters, valid after solve(): the rate of each flow a link fixed (0 if it fixed none), and
  // whether a flow (up, down) has the up link as its bottleneck.
  double level(bool up, std::uint32_t i) const { return level_[up ? 0 : 1][lane_[up ? 0 : 1][i]]; }
  bool fixed_by_up(std::uint32_t up, std::uint32_t down) const {
    return step_[0][lane_[0][up]] < step_[1][lane_[1][down]];
  }
  std::uint32_t links(bool up) const { return size_[up ? 0 : 1]; }

 private:
  // Links are kept in lanes numbered in the order they last saturated (renumbered every few
  // solves: the order moves slowly), so the lanes a solve has closed are mostly a prefix that its
  // vector passes skip.
  static constexpr std::uint32_t kRenumberEvery = 64;
  void saturate();
  void renumber();
  // The sort key of a link in order_: its step, or past every step (in a fixed order) if it
  // fixed no flow.
  std::uint64_t key(std::uint32_t entry) const {
    const std::uint32_t side = entry >> 31, i = entry & 0x7fffffffu;
    return step_[side][i] != kNever ? step_[side][i] : (std::uint64_t{1} << 32) + entry;
  }
  template <class OnFlip>
  void reorder(OnFlip& on_flip) {
    // Every swap exchanges two links whose order changed; an up and a down link sharing a flow
    // are a pair whose bottleneck changed.
    for (std::size_t a = 1; a < order_.size(); ++a) {
      const std::uint32_t x = order_[a];
      const std::uint64_t kx = key(x);
      std::size_t b = a;
      for (; b > 0 && key(order_[b - 1]) > kx; --b) {
        const std::uint32_t y = order_[b - 1];
        if ((x >> 31) != (y >> 31)) {
          const std::uint32_t up = (x >> 31) ? (y & 0x7fffffffu) : (x & 0x7fffffffu);
          const std::uint32_t down = (x >> 31) ? (x & 0x7fffffffu) : (y & 0x7fffffffu);
          if (rows_[0][static_cast<std::size_t>(up) * stride_[1] + down] > 0) on_flip(link_[0][up], link_[1][down]);
        }
        order_[b] = y;
      }
      order_[b] = x;
    }
  }

  std::uint32_t size_[2], stride_[2];  // links per side (up, down); padded for vector passes
  double bound_;
  std::uint64_t solves_ = 0;
  // Per side: the lane of each link, and the link in each lane. Everything below is by lane.
  std::vector<std::uint32_t> lane_[2], link_[2];
  // rows_[0][u * stride_[1] + d] = rows_[1][d * stride_[0] + u]: flows from up lane u to down
  // lane d.
  std::vector<float> rows_[2];
  std::vector<double> flows_[2];  // per link: flows sharing it
  // The saturation loop's state per side: remaining bound, flows not fixed yet (0 once the link
  // saturated or all its flows were fixed by the other side).
  std::vector<double> remaining_[2], open_[2];
  std::vector<double> level_[2];
  std::vector<std::uint32_t> step_[2];  // the step it saturated at, or kNever
  // Every link, (side << 31) | lane, in the order the last solve saturated them (those that
  // saturated none last, in a fixed order): the guess for the next solve.
  std::vector<std::uint32_t> order_;
};

}  // namespace railcheck::sim
