#pragma once
// Breadth-first search on several threads (SearchLimits::threads > 1), level by level, with the
// one-thread search's verdict, figures and shortest counterexample whatever the thread count.
//
// Why the result cannot depend on the threads: a child is named by its key (its parent's index
// in the level's frontier, the choice's index), and the one-thread search meets a level's
// children in key order, keeps the first arrival of each new fingerprint and stops at the first
// violation (or at the max_states-th new state). Here the frontier is cut into chunks of
// consecutive parents that threads take in turn; each new fingerprint is claimed in a per-level
// table for the smallest key that reaches it, whichever thread got there first. A chunk keeps
// only the children it claimed and, once the level is expanded, drops those a smaller key took
// from it, so the chunks' survivors in chunk order are the one-thread search's new states in its
// order. The violation reported is the survivor with the smallest key, and the figures are
// recomputed at that key (states and end states from each parent's number of choices), so they
// are the one-thread search's at the moment it stopped. Only --max-seconds, a wall-time bound,
// stops at a point that depends on the threads.
//
// Memory: like the one-thread search, a level's frontier and the next level (plus children
// claimed and not yet taken back by a smaller key: one per race lost); one 8-byte fingerprint per
// state in the visited set, and 16 bytes per new state of the level being expanded.
#include <algorithm>
#include <array>
#include <atomic>
#include <cassert>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "verify/explorer.hpp"

namespace railcheck::verify::detail {

// The visited set shared by the threads: fingerprints sharded by their top bits, one
// FingerprintSet and one lock per shard.
class ShardedFingerprintSet {
 public:
  ShardedFingerprintSet() : shards_(std::make_unique<Shard[]>(kShards)) {}
  bool insert(std::uint64_t fp) {
    Shard& s = shards_[fp >> (64 - kShardBits)];
    const std::lock_guard lock(s.mutex);
    return s.set.insert(fp);
  }
  // Unlocked: only while no thread inserts (the expansion phase of a level).
  bool contains(std::uint64_t fp) const { return shards_[fp >> (64 - kShardBits)].set.contains(fp); }

 private:
  static constexpr int kShardBits = 8;
  static constexpr std::size_t kShards = std::size_t{1} << kShardBits;
  struct alignas(64) Shard {
    std::mutex mutex;
    FingerprintSet set{1 << 10};
  };
  std::unique_ptr<Shard[]> shards_;
};

// One level's new fingerprints, each with the smallest key that reached it so far.
class LevelClaims {
 public:
  static constexpr std::uint64_t kNone = ~0ULL;
  LevelClaims() : shards_(std::make_unique<Shard[]>(kShards)) {}
  // True when `key` is now the smallest key of `fp` (first arrival, or smaller than the holder's).
  bool claim(std::uint64_t fp, std::uint64_t key) {
    Shard& s = shard(fp);
    const std::lock_guard lock(s.mutex);
    if (2 * (s.used + 1) > s.slots.size()) s.grow();
    Slot& slot = s.find(fp);
    if (slot.key == kNone) {
      slot = Slot{fp, key};
      ++s.used;
      return true;
    }
    if (key >= slot.key) return false;
    slot.key = key;
    return true;
  }
  // Unlocked: only once every claim of the level is in.
  std::uint64_t key_of(std::uint64_t fp) { return shard(fp).find(fp).key; }

 private:
  struct Slot {
    std::uint64_t fp = 0;
    std::uint64_t key = kNone;  // kNone: empty
  };
  struct alignas(64) Shard {
    std::mutex mutex;
    std::vector<Slot> slots = std::vector<Slot>(64);
    std::size_t used = 0;
    // The slot holding `fp`, or the empty slot where it would go.
    Slot& find(std::uint64_t fp) {
      const std::size_t mask = slots.size() - 1;
      for (std::size_t i = static_cast<std::size_t>((fp * 0x9E3779B97F4A7C15ULL) >> 17) & mask;; i = (i + 1) & mask)
        if (slots[i].key == kNone || slots[i].fp == fp) return slots[i];
    }
    void grow() {
      std::vector<Slot> old(slots.size() * 2);
      old.swap(slots);
      for (const Slot& s : old)
        if (s.key != kNone) find(s.fp) = s;
    }
  };
  static constexpr int kShardBits = 8;
  static constexpr std::size_t kShards = std::size_t{1} << kShardBits;
  Shard& shard(std::uint64_t fp) { return shards_[fp >> (64 - kShardBits)]; }
  std::unique_ptr<Shard[]> shards_;
};

// Runs `work(chunk)` for chunks 0..n-1 on `threads` threads (each takes the next chunk not yet
// taken); the calling thread waits, calling `between()` about every 100 ms.
template <typename Work, typename Between>
void run_chunks(unsigned threads, std::size_t chunks, const Work& work, const Between& between) {
  std::atomic<std::size_t> next{0};
  std::mutex m;
  std::condition_variable cv;
  unsigned running = threads;
  std::vector<std::thread> pool;
  pool.reserve(threads);
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      for (std::size_t c; (c = next.fetch_add(1, std::memory_order_relaxed)) < chunks;) work(c);
      const std::lock_guard lock(m);
      if (--running == 0) cv.notify_one();
    });
  {
    std::unique_lock lock(m);
    while (!cv.wait_for(lock, std::chrono::milliseconds(100), [&] { return running == 0; })) {
      lock.unlock();
      between();
      lock.lock();
    }
  }
  for (auto& t : pool) t.join();
}

template <typename World>
SearchResult<World> explore_bfs_threads(const World& root, std::span<const Invariant<World>> invariants,
                                        const SearchLimits& lim, const ProgressFn<World>& progress) {
  using Choice = typename World::ChoiceType;
  SearchResult<World> result;
  SearchStats& st = result.stats;
  const auto t0 = std::chrono::steady_clock::now();
  constexpr std::uint64_t kRoot = ~0ULL;
  constexpr int kChoiceBits = kLevelChoiceBits;

  struct Node {
    std::uint64_t parent;
    Choice via;
  };
  std::vector<Node> nodes;
  auto path_to = [&](std::uint64_t n) {
    std::vector<Choice> p;
    for (; n != kRoot; n = nodes[n].parent) p.push_back(nodes[n].via);
    return std::vector<Choice>(p.rbegin(), p.rend());
  };
  // A state of the frontier, or a child claimed while a level is expanded.
  struct Arrival {
    World world;
    std::uint64_t node;  // index in `nodes` (kRoot: the root); set when the level is merged
    std::uint64_t parent_node;
    std::uint64_t key;
    std::uint64_t fp;
    std::optional<Choice> via;  // none: the root
  };
  using Level = std::vector<std::vector<Arrival>>;  // in key order, list after list

  ShardedFingerprintSet seen;
  st.states = 1;
  st.distinct = 1;
  seen.insert(root.fingerprint());
  if (auto bad = check_all(root, invariants, root.choices().empty())) {
    result.violation = Counterexample<World>{bad->first, bad->second, {}, std::nullopt};
    st.seconds = since(t0);
    return result;
  }
  Level frontier(1);
  frontier[0].push_back(Arrival{root, kRoot, kRoot, 0, 0, std::nullopt});
  bool truncated = false;
  std::atomic<bool> stop{false};  // --max-seconds ran out
  for (std::uint32_t depth = 0;; ++depth) {
    std::vector<std::size_t> offsets{0};  // offsets[l]: frontier index of list l's first state
    for (const auto& list : frontier) offsets.push_back(offsets.back() + list.size());
    const std::size_t width = offsets.back();
    if (width == 0) break;
    const auto room_left = level_room(st, depth, lim, truncated);
    if (!room_left) break;
    const std::uint64_t room = *room_left;
    const std::size_t per_chunk = std::clamp<std::size_t>(width / (std::size_t{lim.threads} * 8), 1, 64);
    const std::size_t chunks = (width + per_chunk - 1) / per_chunk;
    std::vector<std::uint32_t> n_choices(width, 0);
    Level next(chunks);
    LevelClaims claims;
    std::atomic<std::uint64_t> made{0}, claimed{0}, parents_done{0};
    auto report = [&] {
      if (lim.max_seconds > 0 && since(t0) >= lim.max_seconds) stop = true;
      if (lim.progress_every == 0 || !progress) return;
      SearchStats s = st;
      s.states += made.load(std::memory_order_relaxed);
      s.distinct += claimed.load(std::memory_order_relaxed);
      s.pending = width - parents_done.load(std::memory_order_relaxed) + claimed.load(std::memory_order_relaxed);
      s.seconds = since(t0);
      progress(s);
    };

    // Expand: every child of the chunk's parents; keep those that claim a new fingerprint.
    run_chunks(
        lim.threads, chunks,
        [&](std::size_t c) {
          const std::size_t begin = c * per_chunk, end = std::min(width, begin + per_chunk);
          std::size_t list =
              static_cast<std::size_t>(std::upper_bound(offsets.begin(), offsets.end(), begin) - offsets.begin()) - 1;
          std::uint64_t my_made = 0, my_claims = 0;
          for (std::size_t i = begin; i < end && !stop.load(std::memory_order_relaxed); ++i) {
            while (i >= offsets[list + 1]) ++list;
            const Arrival& parent = frontier[list][i - offsets[list]];
            const auto options = parent.world.choices();
            assert(options.size() < (std::size_t{1} << kChoiceBits));
            n_choices[i] = static_cast<std::uint32_t>(options.size());
            for (std::size_t j = 0; j < options.size(); ++j) {
              World n = parent.world;
              n.apply(options[j]);
              ++my_made;
              const std::uint64_t fp = n.fingerprint();
              if (seen.contains(fp)) continue;
              const std::uint64_t key = (std::uint64_t{i} << kChoiceBits) | j;
              if (!claims.claim(fp, key)) continue;
              next[c].push_back(Arrival{std::move(n), 0, parent.node, key, fp, options[j]});
              // Children after this chunk's room-th claim come after room new states of the
              // level (each claimed fingerprint's smallest key is below theirs): never kept.
              if (++my_claims >= room) break;
            }
            parents_done.fetch_add(1, std::memory_order_relaxed);
            if (my_claims >= room) break;
          }
          made.fetch_add(my_made, std::memory_order_relaxed);
          claimed.fetch_add(my_claims, std::memory_order_relaxed);
        },
        report);
    if (stop) {
      st.states += made;
      truncated = true;
      st.truncated_by = "max_seconds";
      break;
    }

    // Keep what each chunk still holds, record it as visited, and judge it; a chunk stops at
    // its first violation (only the first in key order can be reported).
    struct Verdict {
      std::size_t at;  // index in the chunk's survivors
      std::string invariant, message;
    };
    std::vector<std::optional<Verdict>> verdicts(chunks);
    run_chunks(
        lim.threads, chunks,
        [&](std::size_t c) {
          auto& kids = next[c];
          std::size_t kept = 0;
          for (std::size_t k = 0; k < kids.size(); ++k) {
            if (claims.key_of(kids[k].fp) != kids[k].key) continue;
            if (kept != k) kids[kept] = std::move(kids[k]);
            Arrival& a = kids[kept++];
            seen.insert(a.fp);
            if (auto bad = check_all(a.world, invariants, a.world.choices().empty())) {
              verdicts[c] = Verdict{kept - 1, std::move(bad->first), std::move(bad->second)};
              break;
            }
          }
          kids.erase(kids.begin() + static_cast<std::ptrdiff_t>(kept), kids.end());
        },
        [] {});

    // Merge in chunk order. The run stops inside this level at the first violation or at the
    // room-th new state, whichever comes first.
    std::uint64_t survivors = 0;
    std::optional<std::uint64_t> cut;
    const Verdict* verdict = nullptr;
    for (std::size_t c = 0; c < chunks; ++c) {
      if (verdicts[c]) {
        cut = survivors + verdicts[c]->at;
        verdict = &*verdicts[c];
        break;
      }
      survivors += next[c].size();
    }
    if (!cut || *cut >= room) {
      std::uint64_t total = 0;
      for (const auto& kids : next) total += kids.size();
      if (total >= room) {
        cut = room - 1;
        verdict = nullptr;
      }
    }
    std::uint64_t cut_key = ~0ULL;
    std::uint64_t position = 0;
    for (auto& kids : next) {
      for (auto& a : kids) {
        if (cut && position > *cut) break;
        nodes.push_back(Node{a.parent_node, *a.via});
        a.node = nodes.size() - 1;
        if (cut && position == *cut) cut_key = a.key;
        ++position;
      }
    }
    // The figures at the cut: every child of the parents before it, and the cut's own choices.
    const std::size_t last_parent = cut ? static_cast<std::size_t>(parent_of_key(cut_key)) : width;
    for (std::size_t i = 0; i < last_parent; ++i) {
      st.states += n_choices[i];
      if (n_choices[i] == 0) ++st.end_states;
    }
    if (cut) {
      count_cut(st, cut_key, *cut, verdict != nullptr, depth, truncated);
      if (verdict != nullptr)
        result.violation =
            Counterexample<World>{verdict->invariant, verdict->message, path_to(nodes.size() - 1), std::nullopt};
      break;
    }
    count_level(st, position, depth, lim, progress, t0);
    frontier = std::move(next);
  }
  st.pending = 0;
  st.exhausted = !truncated && !result.violation;
  st.seconds = since(t0);
  return result;
}

}  // namespace railcheck::verify::detail
