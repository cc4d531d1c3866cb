#pragma once
// The explorer: walks a world's state graph and checks invariants on every state.
//   dfs     depth-first with a visited set of state fingerprints: exhausts the bound with the
//           least memory; a counterexample is a path, not necessarily the shortest.
//   bfs     breadth-first, level by level: the first violation found has the fewest steps.
//   random  seeded random walks from the initial state, for worlds too large to exhaust; walk k
//           uses SeededRng(seed).fork(k), so any walk replays from (seed, k).
//   pdfs    depth-first on `threads` threads sharing one visited set (verify/parallel_dfs.hpp):
//           exhausts a bound with the dfs's memory on every core; the verdict and the counts of an
//           exhausted run are the dfs's; a counterexample is a real path, not the shortest.
//
// A World is any copyable type with
//   using ChoiceType = ...;                       // one step, printable with to_string()
//   std::vector<ChoiceType> choices() const;      // empty at an end state
//   void apply(const ChoiceType&);
//   std::uint64_t fingerprint() const;            // equal for states that behave the same
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/core/rng.hpp"
#include "verify/invariant.hpp"

namespace railcheck::verify {

enum class SearchMode : std::uint8_t { Dfs, Bfs, Random, ParallelDfs };

struct SearchLimits {
  SearchMode mode = SearchMode::Dfs;
  std::uint64_t max_states = 20'000'000;  // distinct states; beyond it the run is not exhaustive
  std::uint32_t max_depth = 400;          // steps from the initial state
  std::uint64_t walks = 1000;             // random mode
  std::uint64_t seed = 1;                 // random mode
  double max_seconds = 0;                 // wall-time bound in every mode; 0: none. Hitting it is inconclusive
  // Threads of a bfs search (verify/parallel_bfs.hpp): the same verdict, figures and shortest
  // counterexample as one thread; 1 runs the one-thread search below. Threads of a pdfs search
  // (verify/parallel_dfs.hpp). dfs and random run on one thread whatever this says (the command
  // line refuses --threads with them).
  unsigned threads = 1;
  // Called every `progress_every` states with the running statistics (stderr progress line).
  std::uint64_t progress_every = 0;
};

struct SearchStats {
  std::uint64_t states = 0;      // states visited, counting revisits through other paths
  std::uint64_t distinct = 0;    // distinct fingerprints
  std::uint64_t end_states = 0;  // states with no step left
  std::uint32_t max_depth = 0;
  std::uint64_t pending = 0;  // steps known but not yet taken (dfs stack / bfs frontier); in progress reports
  double seconds = 0;
  bool exhausted = false;    // every state within the bound was explored
  std::string truncated_by;  // why not, when not: "max_states", "max_depth", "random walks"
  double states_per_second() const { return seconds > 0 ? static_cast<double>(states) / seconds : 0; }
  double distinct_per_second() const { return seconds > 0 ? static_cast<double>(distinct) / seconds : 0; }
  // Seconds until `max_states` distinct states at the rate so far: an upper bound on the run
  // left (a run that exhausts its bound ends sooner), infinity before any rate is known.
  double seconds_to_cap(std::uint64_t max_states) const {
    const double rate = distinct_per_second();
    if (rate <= 0) return std::numeric_limits<double>::infinity();
    return max_states > distinct ? static_cast<double>(max_states - distinct) / rate : 0.0;
  }
};

template <typename World>
struct Counterexample {
  std::string invariant;
  std::string message;
  std::vector<typename World::ChoiceType> steps;  // from the initial state
  std::optional<std::uint64_t> walk;              // random mode: which walk
};

template <typename World>
struct SearchResult {
  SearchStats stats;
  std::optional<Counterexample<World>> violation;
};

template <typename World>
using ProgressFn = std::function<void(const SearchStats&)>;

namespace detail {

// The visited set: 64-bit fingerprints in one open-addressing table (linear probing, grown at
// half full), no allocation per state as a node-based set has. Fingerprint 0 is kept aside.
class FingerprintSet {
 public:
  explicit FingerprintSet(std::size_t capacity_pow2 = 1 << 16) : slots_(capacity_pow2, 0) {}
  // True when `fp` was not in the set (and now is).
  bool insert(std::uint64_t fp) {
    if (fp == 0) {
      if (has_zero_) return false;
      has_zero_ = true;
      ++size_;
      return true;
    }
    if (2 * (used_ + 1) > slots_.size()) grow();
    if (!place(slots_, fp)) return false;
    ++used_;
    ++size_;
    return true;
  }
  bool contains(std::uint64_t fp) const {
    if (fp == 0) return has_zero_;
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = slot_of(fp, mask);; i = (i + 1) & mask) {
      if (slots_[i] == fp) return true;
      if (slots_[i] == 0) return false;
    }
  }
  std::size_t size() const { return size_; }

 private:
  static std::size_t slot_of(std::uint64_t fp, std::size_t mask) {
    return static_cast<std::size_t>((fp * 0x9E3779B97F4A7C15ULL) >> 17) & mask;
  }
  static bool place(std::vector<std::uint64_t>& t, std::uint64_t fp) {
    const std::size_t mask = t.size() - 1;
    for (std::size_t i = slot_of(fp, mask);; i = (i + 1) & mask) {
      if (t[i] == fp) return false;
      if (t[i] == 0) {
        t[i] = fp;
        return true;
      }
    }
  }
  void grow() {
    std::vector<std::uint64_t> bigger(slots_.size() * 2, 0);
    for (const std::uint64_t fp : slots_)
      if (fp != 0) place(bigger, fp);
    slots_.swap(bigger);
  }
  std::vector<std::uint64_t> slots_;
  std::size_t used_ = 0;  // non-zero fingerprints held
  std::size_t size_ = 0;
  bool has_zero_ = false;
};

template <typename World>
std::optional<std::pair<std::string, std::string>> check_all(const World& w, std::span<const Invariant<World>> invs,
                                                             bool at_end) {
  for (const auto& inv : invs)
    if (auto why = inv.check(w, at_end)) return std::make_pair(inv.name, *why);
  return std::nullopt;
}

inline double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Breadth-first levels (the threaded and the distributed bfs). A child's key is its parent's
// index in the level << kLevelChoiceBits | its choice's index, so keys order a level's children
// as the one-thread bfs meets them.
inline constexpr int kLevelChoiceBits = 20;
inline std::uint64_t parent_of_key(std::uint64_t key) { return key >> kLevelChoiceBits; }
inline std::uint64_t choice_of_key(std::uint64_t key) { return key & ((std::uint64_t{1} << kLevelChoiceBits) - 1); }

// A level about to be expanded at `depth`: none when max_depth cuts the search there, else how
// many new states it may still add (the one-thread search stops at the new state that brings the
// distinct count to max_states: the first one when the root alone reaches it).
inline std::optional<std::uint64_t> level_room(SearchStats& st, std::uint32_t depth, const SearchLimits& lim,
                                               bool& truncated) {
  if (depth >= lim.max_depth) {
    truncated = true;
    st.truncated_by = "max_depth";
    return std::nullopt;
  }
  return lim.max_states > st.distinct ? lim.max_states - st.distinct : 1;
}

// A level cut at its new state number `cut` (from 0, in key order), whose key is `cut_key`, once
// the choices of every parent before the cut's are counted: adds the cut's own parent's choices up
// to it and the new states up to it. A violation there counts the level as entered (as the
// one-thread search does); without one, max_states made the cut.
inline void count_cut(SearchStats& st, std::uint64_t cut_key, std::uint64_t cut, bool violated, std::uint32_t depth,
                      bool& truncated) {
  st.states += choice_of_key(cut_key) + 1;
  st.distinct += cut + 1;
  if (violated) {
    st.max_depth = depth + 1;
  } else {
    truncated = true;
    st.truncated_by = "max_states";
  }
}

// A level finished whole: its `fresh` new states counted, and progress shown when asked for.
inline void count_level(SearchStats& st, std::uint64_t fresh, std::uint32_t depth, const SearchLimits& lim,
                        const std::function<void(const SearchStats&)>& progress,
                        std::chrono::steady_clock::time_point t0) {
  st.distinct += fresh;
  st.max_depth = depth + 1;
  if (lim.progress_every != 0 && progress) {
    st.seconds = since(t0);
    progress(st);
  }
}

template <typename World>
SearchResult<World> explore_bfs_threads(const World& root, std::span<const Invariant<World>> invariants,
                                        const SearchLimits& lim, const ProgressFn<World>& progress);
template <typename World>
SearchResult<World> explore_dfs_threads(const World& root, std::span<const Invariant<World>> invariants,
                                        const SearchLimits& lim, const ProgressFn<World>& progress);

// A depth-first search's frame: a world, its choices, and how many of them were taken.
template <typename World>
struct DfsFrame {
  World world;
  std::vector<typename World::ChoiceType> options;
  std::size_t next = 0;
};

// One step of a depth-first search (the one-thread dfs's and each pdfs thread's); `path` is the
// steps to the top frame's world. A top frame with no choice left is popped, with the step to it
// (the bottom frame's path is not this stack's to shorten); otherwise its next choice is applied
// to a copy of its world, appended to `path`, and the child handed to `enter`, which pushes a
// frame when it expands the child; when it does not (a leaf, a revisit, a cut) the step is taken
// off `path` again. Returns whether a choice was taken.
template <typename World, typename Enter>
bool dfs_step(std::vector<DfsFrame<World>>& stack, std::vector<typename World::ChoiceType>& path, Enter&& enter) {
  DfsFrame<World>& top = stack.back();
  if (top.next == top.options.size()) {
    stack.pop_back();
    if (!stack.empty()) path.pop_back();
    return false;
  }
  const auto c = top.options[top.next++];
  // The frame's last choice takes its world instead of a copy: nothing reads it again (the frame
  // is popped next, and has nothing left to give away). One copy fewer per state.
  World next = top.next == top.options.size() ? std::move(top.world) : top.world;
  next.apply(c);
  path.push_back(c);
  const std::size_t depth_before = stack.size();
  enter(std::move(next));
  if (stack.size() == depth_before) path.pop_back();  // not pushed: a leaf or a revisit
  return true;
}

}  // namespace detail

template <typename World>
SearchResult<World> explore(const World& root, std::span<const Invariant<World>> invariants, const SearchLimits& lim,
                            const ProgressFn<World>& progress = {}) {
  using Choice = typename World::ChoiceType;
  if (lim.mode == SearchMode::Bfs && lim.threads > 1)
    return detail::explore_bfs_threads(root, invariants, lim, progress);
  if (lim.mode == SearchMode::ParallelDfs) return detail::explore_dfs_threads(root, invariants, lim, progress);
  SearchResult<World> result;
  SearchStats& st = result.stats;
  const auto t0 = std::chrono::steady_clock::now();
  bool truncated = false;
  // The wall clock is read every 1024 states, so the bound costs nothing per state and is
  // overshot by at most 1024 states' work.
  bool out_of_time = false;
  std::function<std::uint64_t()> count_pending;  // set by each mode; only called for a report
  auto tick = [&] {
    if (lim.max_seconds > 0 && st.states % 1024 == 0 && detail::since(t0) >= lim.max_seconds) out_of_time = true;
    if (lim.progress_every != 0 && progress && st.states % lim.progress_every == 0) {
      st.seconds = detail::since(t0);
      st.pending = count_pending ? count_pending() : 0;
      progress(st);
    }
  };
  // Checks one state; returns true if it violates something (and records the counterexample).
  auto judge = [&](const World& w, const std::vector<Choice>& path, bool at_end) {
    if (auto bad = detail::check_all(w, invariants, at_end)) {
      result.violation = Counterexample<World>{bad->first, bad->second, path, std::nullopt};
      return true;
    }
    return false;
  };

  if (lim.mode == SearchMode::Random) {
    // max_states bounds random mode too, counted as states visited (walks do not dedupe): with
    // a huge --walks the run still ends, inconclusive.
    bool capped = false;
    for (std::uint64_t k = 0; k < lim.walks && !result.violation && !capped; ++k) {
      SeededRng rng = SeededRng(lim.seed).fork(k);
      World w = root;
      std::vector<Choice> path;
      for (;;) {
        if (st.states >= lim.max_states || out_of_time) {
          capped = true;
          break;
        }
        ++st.states;
        tick();
        const auto options = w.choices();
        if (judge(w, path, options.empty())) {
          result.violation->walk = k;
          break;
        }
        if (options.empty()) {
          ++st.end_states;
          break;
        }
        if (path.size() >= lim.max_depth) break;
        const Choice c = options[rng.below(options.size())];
        w.apply(c);
        path.push_back(c);
        if (path.size() > st.max_depth) st.max_depth = static_cast<std::uint32_t>(path.size());
      }
    }
    st.distinct = 0;
    st.truncated_by = out_of_time ? "max_seconds" : capped ? "max_states" : "random walks";
    st.seconds = detail::since(t0);
    return result;
  }

  detail::FingerprintSet seen;

  if (lim.mode == SearchMode::Dfs) {
    using Frame = detail::DfsFrame<World>;
    std::vector<Frame> stack;
    std::vector<Choice> path;
    count_pending = [&] {
      std::uint64_t n = 0;
      for (const Frame& f : stack) n += f.options.size() - f.next;
      return n;
    };
    auto enter = [&](World w) {
      ++st.states;
      tick();
      if (!seen.insert(w.fingerprint())) return;  // explored already, through another path
      ++st.distinct;
      auto options = w.choices();
      if (judge(w, path, options.empty())) return;
      if (options.empty()) ++st.end_states;
      if (seen.size() >= lim.max_states) {
        truncated = true;
        st.truncated_by = "max_states";
        return;
      }
      if (path.size() >= lim.max_depth) {
        if (!options.empty()) {
          truncated = true;
          st.truncated_by = "max_depth";
        }
        return;
      }
      st.max_depth = std::max(st.max_depth, static_cast<std::uint32_t>(path.size()));
      stack.push_back(Frame{std::move(w), std::move(options), 0});
    };
    enter(root);
    while (!stack.empty() && !result.violation) {
      if (seen.size() >= lim.max_states) break;
      if (out_of_time) {
        truncated = true;
        st.truncated_by = "max_seconds";
        break;
      }
      detail::dfs_step(stack, path, enter);
    }
  } else {
    // Breadth-first, one level at a time; parents are kept as indices so the counterexample can
    // be rebuilt without keeping every world.
    struct Node {
      std::uint64_t parent;
      Choice via;
    };
    std::vector<Node> nodes;
    std::vector<std::pair<World, std::uint64_t>> frontier;  // world, node index (~0: root)
    constexpr std::uint64_t kRoot = ~0ULL;
    std::uint64_t frontier_left = 0;  // frontier worlds not yet expanded at this level
    const std::vector<std::pair<World, std::uint64_t>>* next_ptr = nullptr;
    count_pending = [&] { return frontier_left + (next_ptr != nullptr ? next_ptr->size() : 0); };
    auto path_to = [&](std::uint64_t n) {
      std::vector<Choice> p;
      for (; n != kRoot; n = nodes[n].parent) p.push_back(nodes[n].via);
      return std::vector<Choice>(p.rbegin(), p.rend());
    };
    ++st.states;
    seen.insert(root.fingerprint());
    st.distinct = 1;
    {
      const auto options = root.choices();
      if (judge(root, {}, options.empty())) {
        st.seconds = detail::since(t0);
        return result;
      }
    }
    frontier.emplace_back(root, kRoot);
    for (std::uint32_t depth = 0; !frontier.empty() && !result.violation; ++depth) {
      if (depth >= lim.max_depth) {
        truncated = true;
        st.truncated_by = "max_depth";
        break;
      }
      std::vector<std::pair<World, std::uint64_t>> next_level;
      next_ptr = &next_level;
      frontier_left = frontier.size();
      for (auto& [w, id] : frontier) {
        --frontier_left;
        const auto options = w.choices();
        if (options.empty()) ++st.end_states;
        if (out_of_time) {
          truncated = true;
          st.truncated_by = "max_seconds";
          break;
        }
        for (const auto& c : options) {
          World n = w;
          n.apply(c);
          ++st.states;
          tick();
          if (!seen.insert(n.fingerprint())) continue;
          ++st.distinct;
          nodes.push_back(Node{id, c});
          const std::uint64_t nid = nodes.size() - 1;
          const auto n_options = n.choices();
          if (judge(n, path_to(nid), n_options.empty())) break;
          if (seen.size() >= lim.max_states) {
            truncated = true;
            st.truncated_by = "max_states";
            break;
          }
          next_level.emplace_back(std::move(n), nid);
        }
        if (result.violation || truncated) break;
      }
      next_ptr = nullptr;
      if (truncated) break;
      st.max_depth = depth + 1;
      frontier = std::move(next_level);
    }
  }
  count_pending = nullptr;
  st.exhausted = !truncated && !result.violation;
  st.seconds = detail::since(t0);
  return result;
}

}  // namespace railcheck::verify

#include "verify/parallel_bfs.hpp"  // IWYU pragma: export (explore_bfs_threads)
#include "verify/parallel_dfs.hpp"  // IWYU pragma: export (explore_dfs_threads)
