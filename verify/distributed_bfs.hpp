#pragma once
// Breadth-first search over several processes (`mpirun -np N railcheck check ... --mode bfs`),
// with the one-process search's verdict, figures and shortest counterexample.
//
// The visited set is partitioned by fingerprint, as in Stern and Dill's parallel Murphi: rank
// fp % N owns fp and alone decides whether it is new, so each rank holds 1/N of the visited set.
// The states themselves stay on the rank that generated them: shipping a world would need a wire
// codec for the whole engine state (queues, QPs, both engines), and a codec that is not written
// is safer than one copied with memcpy (STYLE.md 5). Only fingerprints and keys travel.
//
// A level, on every rank (each holds a contiguous slice of the level's frontier, in key order):
//   1. expand its parents; a child is (fingerprint, key), key = (global parent index, choice
//      index) as in parallel_bfs.hpp; the child world is dropped (it is remade if it wins);
//   2. send each child to its fingerprint's owner (all-to-all); the owner keeps, per new
//      fingerprint, the smallest key, records the winners as visited and answers each child
//      won / lost (all-to-all back);
//   3. remake the winners' worlds from their parents, in key order, and judge them;
//   4. the ranks' winners in rank order are the one-process search's new states in its order,
//      so the first violation, the max_states cut and the figures at that cut are found from
//      a few all-gathered numbers exactly as parallel_bfs.hpp finds them from its chunks.
// A counterexample is walked back from the violating state through the ranks that hold each
// node (a node is the parent's number and the choice's index), then replayed from the root.
//
// Costs: 16 bytes per child on the wire each way (8 back), one extra apply per new state (the
// remake), and a level's frontier spread over the ranks as the winners fall (no rebalancing:
// ranks whose states have more new children get more of the next level).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "verify/explorer.hpp"

namespace railcheck::verify {

// What a distributed search needs from MPI; cli/mpi_ranks.cpp implements it with MPI, the tests
// with threads standing in for ranks. Every call is collective: every rank makes it, in the same
// order.
class RankExchange {
 public:
  virtual ~RankExchange() = default;
  virtual int rank() const = 0;
  virtual int ranks() const = 0;
  // Sends out[r] to rank r; returns what each rank sent this one, by sender.
  virtual std::vector<std::vector<std::uint64_t>> all_to_all(const std::vector<std::vector<std::uint64_t>>& out) = 0;
  // Every rank's `mine`, by rank, on every rank.
  virtual std::vector<std::vector<std::uint64_t>> all_gather(const std::vector<std::uint64_t>& mine) = 0;
};

namespace detail {

inline std::uint64_t sum_of(const std::vector<std::vector<std::uint64_t>>& by_rank, std::size_t field) {
  std::uint64_t s = 0;
  for (const auto& v : by_rank) s += v[field];
  return s;
}

}  // namespace detail

// The whole search on every rank; every rank returns the same result. lim.mode must be Bfs;
// lim.threads is ignored (one thread per rank); --max-seconds is judged by rank 0's clock at
// each level's end.
template <typename World>
SearchResult<World> explore_distributed(const World& root, std::span<const Invariant<World>> invariants,
                                        const SearchLimits& lim, RankExchange& ex,
                                        const ProgressFn<World>& progress = {}) {
  using Choice = typename World::ChoiceType;
  constexpr int kChoiceBits = detail::kLevelChoiceBits;
  constexpr std::uint64_t kNone = ~0ULL;
  SearchResult<World> result;
  SearchStats& st = result.stats;
  const auto t0 = std::chrono::steady_clock::now();
  const auto me = static_cast<std::uint64_t>(ex.rank());
  const auto n_ranks = static_cast<std::uint64_t>(ex.ranks());
  auto owner = [&](std::uint64_t fp) { return static_cast<std::size_t>((fp * 0x9E3779B97F4A7C15ULL >> 32) % n_ranks); };

  detail::FingerprintSet seen;  // the fingerprints this rank owns
  if (owner(root.fingerprint()) == me) seen.insert(root.fingerprint());
  st.states = 1;
  st.distinct = 1;
  if (auto bad = detail::check_all(root, invariants, root.choices().empty())) {
    result.violation = Counterexample<World>{bad->first, bad->second, {}, std::nullopt};
    st.seconds = detail::since(t0);
    return result;
  }
  // Nodes this rank holds: global number (1 + the one-process search's node index; 0 is the
  // root), parent's number, choice index. Appended in increasing number.
  struct Node {
    std::uint64_t id, parent;
    std::uint32_t choice;
  };
  std::vector<Node> nodes;
  struct Held {
    World world;
    std::uint64_t node;
  };
  std::vector<Held> frontier;
  if (me == 0) frontier.push_back(Held{root, 0});

  bool truncated = false;
  for (std::uint32_t depth = 0;; ++depth) {
    const auto widths = ex.all_gather({frontier.size()});
    std::uint64_t offset = 0, width = 0;
    for (std::uint64_t r = 0; r < n_ranks; ++r) {
      if (r < me) offset += widths[r][0];
      width += widths[r][0];
    }
    if (width == 0) break;
    const auto room_left = detail::level_room(st, depth, lim, truncated);
    if (!room_left) break;
    const std::uint64_t room = *room_left;

    // 1-2. Expand, and ask each fingerprint's owner. A rank sends a fingerprint once per level
    // (its first key for it is its smallest: its keys grow).
    std::vector<std::uint32_t> n_choices(frontier.size());
    std::vector<std::vector<std::uint64_t>> ask(n_ranks);  // fp, key pairs by owner
    std::unordered_map<std::uint64_t, std::uint8_t> asked;
    for (std::size_t i = 0; i < frontier.size(); ++i) {
      const auto options = frontier[i].world.choices();
      n_choices[i] = static_cast<std::uint32_t>(options.size());
      for (std::size_t j = 0; j < options.size(); ++j) {
        World n = frontier[i].world;
        n.apply(options[j]);
        const std::uint64_t fp = n.fingerprint();
        if (!asked.emplace(fp, 0).second) continue;
        auto& out = ask[owner(fp)];
        out.push_back(fp);
        out.push_back(((offset + i) << kChoiceBits) | j);
      }
    }
    asked.clear();
    const auto asks = ex.all_to_all(ask);
    std::unordered_map<std::uint64_t, std::uint64_t> best;  // fp -> smallest key, new fingerprints only
    for (const auto& from : asks)
      for (std::size_t k = 0; k < from.size(); k += 2) {
        if (seen.contains(from[k])) continue;
        auto [it, fresh] = best.emplace(from[k], from[k + 1]);
        if (!fresh) it->second = std::min(it->second, from[k + 1]);
      }
    std::vector<std::vector<std::uint64_t>> won(n_ranks);
    for (std::size_t r = 0; r < n_ranks; ++r)
      for (std::size_t k = 0; k < asks[r].size(); k += 2) {
        const auto it = best.find(asks[r][k]);
        won[r].push_back(it != best.end() && it->second == asks[r][k + 1] ? 1 : 0);
      }
    for (const auto& [fp, key] : best) seen.insert(fp);
    best.clear();
    const auto answers = ex.all_to_all(won);

    // 3. This rank's winners, in key order (merge the owners' answers back into ask order).
    std::vector<std::uint64_t> win_keys;
    for (std::size_t r = 0; r < n_ranks; ++r)
      for (std::size_t k = 0; k < answers[r].size(); ++k)
        if (answers[r][k] != 0) win_keys.push_back(ask[r][2 * k + 1]);
    std::sort(win_keys.begin(), win_keys.end());
    std::vector<Held> next_level;
    next_level.reserve(win_keys.size());
    std::uint64_t first_bad = kNone;
    std::size_t options_of = kNone;
    std::vector<Choice> options;
    for (const std::uint64_t key : win_keys) {
      const std::size_t parent = detail::parent_of_key(key) - offset;
      if (parent != options_of) {
        options = frontier[parent].world.choices();
        options_of = parent;
      }
      World n = frontier[parent].world;
      n.apply(options[detail::choice_of_key(key)]);
      const bool bad = detail::check_all(n, invariants, n.choices().empty()).has_value();
      next_level.push_back(Held{std::move(n), kNone});
      if (bad) {
        first_bad = next_level.size() - 1;
        break;
      }
    }

    // 4. Where the run stops inside this level, if it does, in the one-process order.
    const auto counts = ex.all_gather({win_keys.size(), first_bad});
    std::uint64_t before = 0, mine_at = 0;  // winners of the ranks before, of those before this one
    std::optional<std::uint64_t> cut;
    bool violated = false;
    for (std::uint64_t r = 0; r < n_ranks; ++r) {
      if (r == me) mine_at = before;
      if (!cut && counts[r][1] != kNone) {
        cut = before + counts[r][1];
        violated = true;
      }
      before += counts[r][0];
    }
    const std::uint64_t total = before;
    if ((!cut || *cut >= room) && total >= room) {
      cut = room - 1;
      violated = false;
    }
    // Number this rank's winners up to the cut.
    const std::uint64_t base = st.distinct;  // global number of this level's first new state
    std::uint64_t cut_key = kNone;
    for (std::size_t k = 0; k < next_level.size(); ++k) {
      const std::uint64_t pos = mine_at + k;
      if (cut && pos > *cut) {
        next_level.erase(next_level.begin() + static_cast<std::ptrdiff_t>(k), next_level.end());
        break;
      }
      const std::uint64_t key = win_keys[k];
      next_level[k].node = base + pos;
      nodes.push_back(Node{base + pos, frontier[detail::parent_of_key(key) - offset].node,
                           static_cast<std::uint32_t>(detail::choice_of_key(key))});
      if (cut && pos == *cut) cut_key = key;
    }
    // The figures at the cut: every child of the parents before it (each rank sums its own).
    const auto cut_keys = ex.all_gather({cut_key});
    for (const auto& v : cut_keys)
      if (v[0] != kNone) cut_key = v[0];
    const std::uint64_t last_parent = cut ? detail::parent_of_key(cut_key) : width;
    std::uint64_t made = 0, ends = 0;
    for (std::size_t i = 0; i < frontier.size() && offset + i < last_parent; ++i) {
      made += n_choices[i];
      ends += n_choices[i] == 0 ? 1 : 0;
    }
    const std::uint64_t stop_clock = me == 0 && lim.max_seconds > 0 && detail::since(t0) >= lim.max_seconds ? 1 : 0;
    const auto sums = ex.all_gather({made, ends, stop_clock});
    st.states += detail::sum_of(sums, 0);
    st.end_states += detail::sum_of(sums, 1);
    if (cut) {
      detail::count_cut(st, cut_key, *cut, violated, depth, truncated);
      if (violated) {
        // Walk back from the violating node to the root, one hop per all-gather, then replay
        // the choice indices from the root to name the steps.
        std::vector<std::uint64_t> indices;
        for (std::uint64_t at = base + *cut; at != 0;) {
          std::vector<std::uint64_t> hop;
          const auto it = std::lower_bound(nodes.begin(), nodes.end(), at,
                                           [](const Node& n, std::uint64_t id) { return n.id < id; });
          if (it != nodes.end() && it->id == at) hop = {it->parent, it->choice};
          for (const auto& v : ex.all_gather(hop))
            if (!v.empty()) hop = v;
          indices.push_back(hop[1]);
          at = hop[0];
        }
        std::vector<Choice> steps;
        World w = root;
        for (auto it = indices.rbegin(); it != indices.rend(); ++it) {
          steps.push_back(w.choices()[*it]);
          w.apply(steps.back());
        }
        // Every rank replays the same steps to the same state, so every rank names the violation
        // the rank that found it judged.
        auto bad = detail::check_all(w, invariants, w.choices().empty());
        result.violation =
            Counterexample<World>{bad ? bad->first : "", bad ? bad->second : "", std::move(steps), std::nullopt};
      }
      break;
    }
    detail::count_level(st, total, depth, lim, progress, t0);
    frontier = std::move(next_level);
    if (detail::sum_of(sums, 2) != 0) {
      truncated = true;
      st.truncated_by = "max_seconds";
      break;
    }
  }
  st.exhausted = !truncated && !result.violation;
  st.seconds = detail::since(t0);
  return result;
}

}  // namespace railcheck::verify
