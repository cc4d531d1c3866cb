#include "backends/sim/routing/bipartite_sharing.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include "engine/core/engine_assert.hpp"

namespace railcheck::sim {
namespace {

// The passes below are templates over a vector of doubles D (and F, floats of as many lanes),
// written once and compiled three times, each at the register width of its instruction set:
// AVX-512 (8 doubles), AVX2 (4), SSE2 (2, the x86-64 baseline); GCC's function multiversioning
// picks the best the CPU has at load time. One width for all made GCC 12 spill the narrower
// instruction sets' vectors to the stack: 10x slower there. Rows are padded to blocks of kLanes.
using D2 = double __attribute__((vector_size(16)));
using F2 = float __attribute__((vector_size(8)));
using D4 = double __attribute__((vector_size(32)));
using F4 = float __attribute__((vector_size(16)));
using D8 = double __attribute__((vector_size(64)));
using F8 = float __attribute__((vector_size(32)));
constexpr std::uint32_t kLanes = 8;

// A link whose ratio is within this of the guess's level ties with it: taking either first changes
// the levels by about as much, far under the 1e-9 the figures are held to. Without it, rounding
// of level * open makes the guess its own violator half the time.
constexpr double kTie = 1.0 - 1e-15;

template <class D>
constexpr std::uint32_t kWidth = sizeof(D) / sizeof(double);

// The running least gap (remaining - level * open) and most open flows of a pass over lanes.
template <class D>
struct GapScan {
  D least = std::numeric_limits<double>::infinity() - D{}, most = 0 - D{};
  [[gnu::always_inline]] void add(const D& r, const D& o, double level) {
    const D gap = r - level * o;
    least = gap < least ? gap : least;
    most = o > most ? o : most;
  }
  [[gnu::always_inline]] double result(double* most_open) const {
    double l = least[0], m = most[0];
    for (std::uint32_t k = 1; k < kWidth<D>; ++k) l = std::min(l, least[k]), m = std::max(m, most[k]);
    *most_open = m;
    return l;
  }
};

// The other side's share of a saturated link: each of its flows to lane j was open there, and is
// now fixed at `level`. Lanes already closed go negative in `open` and stay closed. In the same
// pass, what least_gap below gives for the shared lanes at `next` (the next guess's level).
template <class D, class F>
[[gnu::always_inline]] inline double take_share_in(double* remaining, double* open, const float* row, double level,
                                                   double next, std::uint32_t stride, double* most_open) {
  GapScan<D> scan;
  for (std::uint32_t j = 0; j < stride; j += kWidth<D>) {
    F f;
    D r, o;
    std::memcpy(&f, row + j, sizeof f);
    std::memcpy(&r, remaining + j, sizeof r);
    std::memcpy(&o, open + j, sizeof o);
    const D flows = __builtin_convertvector(f, D);
    r -= level * flows;
    o -= flows;
    std::memcpy(remaining + j, &r, sizeof r);
    std::memcpy(open + j, &o, sizeof o);
    scan.add(r, o, next);
  }
  return scan.result(most_open);
}

// The least of remaining - level * open over a side's lanes: under 0 where an open lane's ratio
// is under `level` (a multiply and a min, no division); and the most open flows of a lane. A
// closed lane never is under: a saturated one has its remaining at infinity, one whose flows the
// other side fixed has open 0 (then negative) and its remaining left over (0 or more, but for
// rounding: saturate() takes care of that).
template <class D>
[[gnu::always_inline]] inline double least_gap_in(const double* remaining, const double* open, double level,
                                                  std::uint32_t stride, double* most_open) {
  GapScan<D> scan;
  for (std::uint32_t j = 0; j < stride; j += kWidth<D>) {
    D r, o;
    std::memcpy(&r, remaining + j, sizeof r);
    std::memcpy(&o, open + j, sizeof o);
    scan.add(r, o, level);
  }
  return scan.result(most_open);
}

// The open lane of least remaining / open, and that ratio (infinity if none is open). A lane
// closed with a rounding below 0 left gets its remaining set to infinity on the way: it is never a
// candidate, and least_gap no longer finds it under. (No `&` of two comparisons in these passes:
// GCC 12 turns that into scalar code for AVX-512.)
template <class D>
[[gnu::always_inline]] inline double least_ratio_in(double* remaining, const double* open, std::uint32_t stride,
                                                    std::uint32_t* at) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  D least = inf - D{}, where = 0 - D{}, lane{};
  for (std::uint32_t k = 0; k < kWidth<D>; ++k) lane[k] = k;
  for (std::uint32_t j = 0; j < stride; j += kWidth<D>, lane += kWidth<D>) {
    D r, o;
    std::memcpy(&r, remaining + j, sizeof r);
    std::memcpy(&o, open + j, sizeof o);
    r = r < 0 ? inf : r;  // an open lane's remaining is never under 0
    std::memcpy(remaining + j, &r, sizeof r);
    const D ratio = o > 0.5 ? r / o : inf;
    where = ratio < least ? lane : where;
    least = ratio < least ? ratio : least;
  }
  double l = least[0], w = where[0];
  for (std::uint32_t k = 1; k < kWidth<D>; ++k)
    if (least[k] < l || (least[k] == l && where[k] < w)) l = least[k], w = where[k];
  *at = static_cast<std::uint32_t>(w);
  return l;
}

// Each pass at each width, compiled for its instruction set; passes() holds those the CPU can
// run best. (GCC's function multiversioning would pick them too, but clang 14 then warns that the
// versions are unused, and -Werror stops the build.)
struct Passes {
  double (*take_share)(double*, double*, const float*, double, double, std::uint32_t, double*);
  double (*least_gap)(const double*, const double*, double, std::uint32_t, double*);
  double (*least_ratio)(double*, const double*, std::uint32_t, std::uint32_t*);
};
#define RAILCHECK_PASSES(NAME, TARGET, D, F)                                                                         \
  __attribute__((target(TARGET))) double take_share_##NAME(double* remaining, double* open, const float* row,        \
                                                           double level, double next, std::uint32_t stride,          \
                                                           double* most_open) {                                      \
    return take_share_in<D, F>(remaining, open, row, level, next, stride, most_open);                                \
  }                                                                                                                  \
  __attribute__((target(TARGET))) double least_gap_##NAME(const double* remaining, const double* open, double level, \
                                                          std::uint32_t stride, double* most_open) {                 \
    return least_gap_in<D>(remaining, open, level, stride, most_open);                                               \
  }                                                                                                                  \
  __attribute__((target(TARGET))) double least_ratio_##NAME(double* remaining, const double* open,                   \
                                                            std::uint32_t stride, std::uint32_t* at) {               \
    return least_ratio_in<D>(remaining, open, stride, at);                                                           \
  }                                                                                                                  \
  constexpr Passes k##NAME##Passes{take_share_##NAME, least_gap_##NAME, least_ratio_##NAME};
RAILCHECK_PASSES(Sse2, "sse2", D2, F2)
RAILCHECK_PASSES(Avx2, "avx2", D4, F4)
RAILCHECK_PASSES(Avx512, "avx512f", D8, F8)
#undef RAILCHECK_PASSES

const Passes& passes() {
  static const Passes best = __builtin_cpu_supports("avx512f") ? kAvx512Passes
                             : __builtin_cpu_supports("avx2")  ? kAvx2Passes
                                                               : kSse2Passes;
  return best;
}

}  // namespace

BipartiteSharing::BipartiteSharing(std::uint32_t ups, std::uint32_t downs, double bound)
    : size_{ups, downs}, bound_(bound) {
  RAILCHECK_ASSERT(ups > 0 && downs > 0 && ups < (1u << 31) && downs < (1u << 31),
                   "a bipartite sharing has 1 .. 2^31 - 1 links a side");
  for (int s = 0; s < 2; ++s) stride_[s] = (size_[s] + kLanes - 1) / kLanes * kLanes;
  for (int s = 0; s < 2; ++s) {
    rows_[s].assign(static_cast<std::size_t>(size_[s]) * stride_[1 - s], 0.0f);
    flows_[s].assign(stride_[s], 0.0);
    remaining_[s].assign(stride_[s], 0.0);
    open_[s].assign(stride_[s], 0.0);
    level_[s].assign(size_[s], 0.0);
    step_[s].assign(size_[s], kNever);
    for (std::uint32_t i = 0; i < size_[s]; ++i) {
      order_.push_back((static_cast<std::uint32_t>(s) << 31) | i);
      lane_[s].push_back(i);
      link_[s].push_back(i);
    }
  }
}

void BipartiteSharing::add(std::uint32_t up_link, std::uint32_t down_link) {
  RAILCHECK_ASSERT(up_link < size_[0] && down_link < size_[1], "a flow's links are in the sharing");
  const std::uint32_t up = lane_[0][up_link], down = lane_[1][down_link];
  rows_[0][static_cast<std::size_t>(up) * stride_[1] + down] += 1.0f;
  rows_[1][static_cast<std::size_t>(down) * stride_[0] + up] += 1.0f;
  flows_[0][up] += 1.0;
  flows_[1][down] += 1.0;
}

void BipartiteSharing::remove(std::uint32_t up_link, std::uint32_t down_link) {
  RAILCHECK_ASSERT(up_link < size_[0] && down_link < size_[1], "a flow's links are in the sharing");
  const std::uint32_t up = lane_[0][up_link], down = lane_[1][down_link];
  RAILCHECK_ASSERT(rows_[0][static_cast<std::size_t>(up) * stride_[1] + down] > 0, "only a flow that joined leaves");
  rows_[0][static_cast<std::size_t>(up) * stride_[1] + down] -= 1.0f;
  rows_[1][static_cast<std::size_t>(down) * stride_[0] + up] -= 1.0f;
  flows_[0][up] -= 1.0;
  flows_[1][down] -= 1.0;
}

void BipartiteSharing::saturate() {
  for (int s = 0; s < 2; ++s) {
    std::fill(remaining_[s].begin(), remaining_[s].end(), bound_);
    open_[s] = flows_[s];
    std::fill(level_[s].begin(), level_[s].end(), 0.0);
    std::fill(step_[s].begin(), step_[s].end(), kNever);
  }
  std::uint32_t step = 0;
  std::size_t cursor = 0;
  constexpr double inf = std::numeric_limits<double>::infinity();
  // Per side, a lower bound on its open links' remaining / open: a link's ratio only grows in
  // this loop (taking a share at a level under its ratio raises it), so a bound stays true.
  // `under`: the last pass over the side found a link under the guess.
  double floor[2] = {-inf, -inf};
  bool under[2] = {false, false};
  // Per side, the first lane of the first block of kLanes that still has an open lane: the
  // passes start there.
  std::uint32_t begin[2] = {0, 0};
  const auto skip_closed = [&](std::uint32_t s) {
    const auto closed = [&](std::uint32_t b) {
      for (std::uint32_t k = 0; k < kLanes; ++k)
        if (open_[s][b + k] > 0.5) return false;
      return true;
    };
    while (begin[s] < stride_[s] && closed(begin[s])) begin[s] += kLanes;
  };
  // The guess: the first link of the last order still open, its values as `shared` (the side
  // the saturating link's row is about to be taken from, or 2) will have them after the share.
  // order_ holds every link, so when it runs out, no flow is left open.
  const float* row = nullptr;
  std::uint32_t shared = 2;
  double share_level = 0;
  const auto value = [&](std::uint32_t s, std::uint32_t i, double& r, double& o) {
    r = remaining_[s][i];
    o = open_[s][i];
    if (s == shared) r -= share_level * static_cast<double>(row[i]), o -= static_cast<double>(row[i]);
  };
  const auto guess = [&](std::uint32_t& side, std::uint32_t& link, double& level) {
    for (; cursor < order_.size(); ++cursor) {
      side = order_[cursor] >> 31, link = order_[cursor] & 0x7fffffffu;
      double r, o;
      value(side, link, r, o);
      if (o > 0.5) {
        level = r / o;
        return true;
      }
    }
    return false;
  };
  std::uint32_t side = 0, link = 0;
  double level = 0;
  if (!guess(side, link, level)) return;
  for (;;) {
    const double tie = level * kTie;
    for (std::uint32_t s = 0; s < 2; ++s) {
      if (!under[s]) {
        if (!(tie > floor[s])) continue;
        double most_open = 0;
        const double gap = passes().least_gap(remaining_[s].data() + begin[s], open_[s].data() + begin[s], tie,
                                              stride_[s] - begin[s], &most_open);
        if (gap >= 0) {
          floor[s] = most_open > 0.5 ? tie + gap / most_open : inf;
          continue;
        }
      }
      // A link the change moved earlier: the least of this side's saturates first, if it is under
      // the guess (and under the other side's, if that side has one under too).
      std::uint32_t at = 0;
      const double least =
          passes().least_ratio(remaining_[s].data() + begin[s], open_[s].data() + begin[s], stride_[s] - begin[s], &at);
      at += begin[s];
      floor[s] = least;
      under[s] = false;
      if (least < level) side = s, link = at, level = least;
    }
    RAILCHECK_ASSERT(level > 0, "a saturating link has capacity left for its open flows");
    level_[side][link] = level;
    step_[side][link] = step++;
    open_[side][link] = 0;
    remaining_[side][link] = inf;
    // The next guess, then the share with the other side's check against it in one pass.
    shared = 1 - side;
    share_level = level;
    row = rows_[side].data() + static_cast<std::size_t>(link) * stride_[shared];
    std::uint32_t next_side = 0, next_link = 0;
    double next_level = inf;
    const bool more = guess(next_side, next_link, next_level);
    double most_open = 0;
    const std::uint32_t b = begin[shared];
    const double gap = passes().take_share(remaining_[shared].data() + b, open_[shared].data() + b, row + b, level,
                                           next_level * kTie, stride_[shared] - b, &most_open);
    if (!more) return;
    skip_closed(0);
    skip_closed(1);
    if (gap >= 0)
      floor[shared] = most_open > 0.5 ? next_level * kTie + gap / most_open : inf;
    else
      under[shared] = true;
    shared = 2;
    side = next_side, link = next_link, level = next_level;
  }
}

void BipartiteSharing::renumber() {
  std::vector<std::uint32_t> to[2];  // old lane -> new lane
  for (int s = 0; s < 2; ++s) to[s].assign(size_[s], 0);
  std::uint32_t next[2] = {0, 0};
  for (std::uint32_t& entry : order_) {
    const std::uint32_t s = entry >> 31;
    to[s][entry & 0x7fffffffu] = next[s];
    entry = (s << 31) | next[s]++;
  }
  for (std::uint32_t s = 0; s < 2; ++s) {
    std::vector<float> rows(rows_[s].size(), 0.0f);
    for (std::uint32_t i = 0; i < size_[s]; ++i)
      for (std::uint32_t j = 0; j < size_[1 - s]; ++j)
        rows[static_cast<std::size_t>(to[s][i]) * stride_[1 - s] + to[1 - s][j]] =
            rows_[s][static_cast<std::size_t>(i) * stride_[1 - s] + j];
    rows_[s].swap(rows);
    std::vector<double> flows(flows_[s].size(), 0.0), level(size_[s]);
    std::vector<std::uint32_t> step(size_[s]), link(size_[s]);
    for (std::uint32_t i = 0; i < size_[s]; ++i) {
      flows[to[s][i]] = flows_[s][i];
      level[to[s][i]] = level_[s][i];
      step[to[s][i]] = step_[s][i];
      link[to[s][i]] = link_[s][i];
    }
    flows_[s].swap(flows);
    level_[s].swap(level);
    step_[s].swap(step);
    link_[s].swap(link);
    for (std::uint32_t i = 0; i < size_[s]; ++i) lane_[s][link_[s][i]] = i;
  }
}

}  // namespace railcheck::sim
