#pragma once
// Depth-first search on several threads (SearchMode::ParallelDfs, `--mode pdfs --threads N`): an
// exhaustive search whose memory is the visited set (8 bytes per distinct state in a table grown
// at half full: 16 to 32 bytes each) plus one stack of worlds per thread, instead of the bfs's
// copy of every world of a level (which ran out of 125 GiB on the full bound both ways).
//
// Each thread runs the one-thread dfs on its own stack; the visited set is shared
// (ShardedFingerprintSet: a lock per shard of fingerprints). A thread with nothing to do waits on
// a shared pool of unexplored work; a thread that sees one waiting gives away the untried
// choices of its oldest frame that has any (half of them, at least one: the largest subtrees),
// as a copy of that frame's world and the path to it. The run ends when every thread waits and
// the pool is empty, or at a violation, `max_states` or `max_seconds`.
//
// What does not depend on the threads, and why. A state is expanded (its choices judged and
// taken) the first time any thread inserts its fingerprint, and every state the search reaches is
// expanded once. So when the steps a state offers are a function of the state alone (choices(),
// with FailoverWorld::reduce's ample set, which looks at the state only) and the fingerprint is a
// function of the state that tells states with different futures apart, the set of states
// reached is the set reachable in that graph, whatever the order: the verdict, `distinct`,
// `end_states` and `states` (1 + the sum of the expanded states' choices) of an exhausted run are
// the one-thread dfs's and bfs's (tested on 1, 2 and 4 threads: tests/verify/parallel_bfs/). Two
// things break that, and both also make dfs and bfs differ from each other on one thread:
// - a depth bound that cuts (`max_depth`): a state first met deep is not expanded, and whether
//   it is met at a smaller depth first depends on the order;
// - a fingerprint that merges states whose futures differ only up to a map (the failover world's
//   symmetry reduction: the connections swapped, fresh ids renamed). Then which member of a
//   class is expanded depends on the order, and the ample set (connection 0's local steps) and
//   the ids handed out next are not the same under the map, so `distinct` varies by a fraction
//   of a percent (bidirectional.toml: 29 818 in a dfs, 29 925 in a bfs). The verdict does not:
//   the argument in docs/verify.md ("Why every invariant survives") holds for any visiting order.
// A violation is reported with the path the finding thread took to it, a real run from the
// initial state that `railcheck replay` reruns; it is not the shortest (that is the bfs's job)
// and which one is found first depends on the threads. `max_depth` of the figures is the
// deepest state expanded, also order-dependent.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "verify/explorer.hpp"
#include "verify/parallel_bfs.hpp"  // ShardedFingerprintSet

namespace railcheck::verify::detail {

template <typename World>
SearchResult<World> explore_dfs_threads(const World& root, std::span<const Invariant<World>> invariants,
                                        const SearchLimits& lim, const ProgressFn<World>& progress) {
  using Choice = typename World::ChoiceType;
  SearchResult<World> result;
  SearchStats& st = result.stats;
  const auto t0 = std::chrono::steady_clock::now();
  const unsigned threads = std::max(1U, lim.threads);

  // Work given away: a world already counted and judged, the steps to it, and the choices of it
  // still to take.
  struct Task {
    World world;
    std::vector<Choice> path;
    std::vector<Choice> options;
  };
  using Frame = DfsFrame<World>;
  // Each thread's figures, read by the main thread for progress lines.
  struct alignas(64) Counters {
    std::atomic<std::uint64_t> states{0}, end_states{0}, pending{0};
    std::atomic<std::uint32_t> max_depth{0};
  };

  ShardedFingerprintSet seen;
  // Distinct states: each thread adds its new ones in batches (one shared counter bumped by every
  // thread for every new state would be the busiest cache line of the run).
  std::atomic<std::uint64_t> distinct{0};
  constexpr std::uint64_t kBatch = 64;
  std::atomic<bool> stop{false};  // a violation, max_states or max_seconds: every thread returns
  std::atomic<bool> hit_depth{false}, hit_states{false}, hit_time{false};
  std::mutex violation_mutex;
  const auto counters = std::make_unique<Counters[]>(threads);

  std::mutex pool_mutex;
  std::condition_variable pool_cv;  // idle workers wait here for work (or the end)
  // The main thread waits on its own: sharing pool_cv, it could take the one notice meant for an
  // idle worker when work was given away, and that worker then slept through the whole search
  // (seen: `--threads 2` ran on one thread; tests: "pdfs puts every thread to work").
  std::condition_variable main_cv;
  std::vector<Task> pool;
  unsigned idle = 0;
  bool done = false;
  std::atomic<int> wanted{0};  // threads waiting minus tasks in the pool (under pool_mutex)
  auto update_wanted = [&] { wanted.store(static_cast<int>(idle) - static_cast<int>(pool.size())); };

  auto worker = [&](unsigned me, std::optional<Task> first) {
    Counters& mine = counters[me];
    std::vector<Frame> stack;
    std::vector<Choice> path;  // steps from the initial state to the top frame's world
    std::uint64_t states = 0, end_states = 0, pending = 0, fresh = 0;  // fresh: new states not yet in `distinct`
    std::uint32_t max_depth = 0;
    auto publish = [&] {
      mine.states.store(states, std::memory_order_relaxed);
      mine.end_states.store(end_states, std::memory_order_relaxed);
      mine.pending.store(pending, std::memory_order_relaxed);
      mine.max_depth.store(max_depth, std::memory_order_relaxed);
    };
    // As the one-thread dfs's `enter`: `w` was reached by `path`.
    auto enter = [&](World w) {
      ++states;
      if (!seen.insert(w.fingerprint())) return;
      // At least the states counted so far: exact on one thread, the run stops at max_states or
      // a little after it on more.
      std::uint64_t d;
      if (++fresh == kBatch) {
        d = distinct.fetch_add(fresh, std::memory_order_relaxed) + fresh;
        fresh = 0;
      } else {
        d = distinct.load(std::memory_order_relaxed) + fresh;
      }
      auto options = w.choices();
      if (auto bad = check_all(w, invariants, options.empty())) {
        const std::lock_guard lock(violation_mutex);
        if (!result.violation) result.violation = Counterexample<World>{bad->first, bad->second, path, std::nullopt};
        stop = true;
        return;
      }
      if (options.empty()) ++end_states;
      if (d >= lim.max_states) {
        hit_states = true;
        stop = true;
        return;
      }
      if (path.size() >= lim.max_depth) {
        if (!options.empty()) hit_depth = true;
        return;
      }
      max_depth = std::max(max_depth, static_cast<std::uint32_t>(path.size()));
      pending += options.size();
      stack.push_back(Frame{std::move(w), std::move(options), 0});
    };
    // Gives half the untried choices of the oldest frame that has any to the pool, keeping at
    // least one untried choice on this stack: a thread that gave all it had would take the next
    // task and give it away again before taking a step (threads passing work around forever).
    auto give_away = [&] {
      if (pending < 2) return;
      for (std::size_t i = 0; i < stack.size(); ++i) {
        Frame& f = stack[i];
        const std::size_t untried = f.options.size() - f.next;
        if (untried == 0) continue;
        const std::size_t give = std::max<std::size_t>(1, untried / 2);
        const std::size_t base = path.size() + 1 - stack.size();  // steps to stack[0]'s world
        Task t{f.world, std::vector<Choice>(path.begin(), path.begin() + static_cast<std::ptrdiff_t>(base + i)),
               std::vector<Choice>(f.options.end() - static_cast<std::ptrdiff_t>(give), f.options.end())};
        f.options.resize(f.options.size() - give);
        pending -= give;
        const std::lock_guard lock(pool_mutex);
        pool.push_back(std::move(t));
        update_wanted();
        pool_cv.notify_one();
        return;
      }
    };
    // The next task from the pool, or none when the search is over.
    auto take = [&]() -> std::optional<Task> {
      std::unique_lock lock(pool_mutex);
      ++idle;
      update_wanted();
      for (;;) {
        if (done || stop) return std::nullopt;
        if (!pool.empty()) break;
        if (idle == threads) {
          done = true;
          pool_cv.notify_all();
          main_cv.notify_all();
          return std::nullopt;
        }
        pool_cv.wait(lock);
      }
      Task t = std::move(pool.back());
      pool.pop_back();
      --idle;
      update_wanted();
      return t;
    };

    std::optional<Task> task = std::move(first);
    for (;;) {
      if (!task) task = take();
      if (!task) break;
      path = std::move(task->path);
      pending += task->options.size();
      stack.push_back(Frame{std::move(task->world), std::move(task->options), 0});
      task.reset();
      while (!stack.empty() && !stop.load(std::memory_order_relaxed)) {
        if ((states & 255) == 0) publish();
        if (wanted.load(std::memory_order_relaxed) > 0) give_away();
        if (dfs_step(stack, path, enter)) --pending;
      }
      stack.clear();
      pending = 0;
      if (stop) break;
    }
    distinct.fetch_add(fresh, std::memory_order_relaxed);
    publish();
    // Wake the others and the main thread: a stop ends their waits too.
    const std::lock_guard lock(pool_mutex);
    pool_cv.notify_all();
    main_cv.notify_all();
  };

  auto totals = [&] {
    SearchStats s;
    s.distinct = distinct.load(std::memory_order_relaxed);
    for (unsigned t = 0; t < threads; ++t) {
      s.states += counters[t].states.load(std::memory_order_relaxed);
      s.end_states += counters[t].end_states.load(std::memory_order_relaxed);
      s.pending += counters[t].pending.load(std::memory_order_relaxed);
      s.max_depth = std::max(s.max_depth, counters[t].max_depth.load(std::memory_order_relaxed));
    }
    s.seconds = since(t0);
    return s;
  };

  // The initial state is entered as the one-thread dfs enters it; its choices are the first task.
  {
    World w = root;
    st.states = 1;
    seen.insert(w.fingerprint());
    distinct = 1;
    auto options = w.choices();
    if (auto bad = check_all(w, invariants, options.empty())) {
      result.violation = Counterexample<World>{bad->first, bad->second, {}, std::nullopt};
      st.distinct = 1;
      st.seconds = since(t0);
      return result;
    }
    if (options.empty() || lim.max_states <= 1 || lim.max_depth == 0) {
      // Nothing to explore (or no room to): the one-thread dfs's figures for a lone root.
      st.distinct = 1;
      st.end_states = options.empty() ? 1 : 0;
      if (!options.empty()) st.truncated_by = lim.max_states <= 1 ? "max_states" : "max_depth";
      st.exhausted = options.empty();
      st.seconds = since(t0);
      return result;
    }
    std::vector<std::thread> pool_threads;
    pool_threads.reserve(threads);
    for (unsigned t = 0; t < threads; ++t)
      pool_threads.emplace_back(
          worker, t, t == 0 ? std::optional<Task>(Task{std::move(w), {}, std::move(options)}) : std::optional<Task>());
    // The main thread watches the clock and reports progress while the workers run.
    {
      std::unique_lock lock(pool_mutex);
      while (!done && !stop) {
        main_cv.wait_for(lock, std::chrono::milliseconds(100));
        if (done || stop) break;
        lock.unlock();
        if (lim.max_seconds > 0 && since(t0) >= lim.max_seconds) {
          hit_time = true;
          stop = true;
        }
        if (lim.progress_every != 0 && progress) progress(totals());
        lock.lock();
      }
      pool_cv.notify_all();
    }
    for (auto& t : pool_threads) t.join();
  }

  const SearchStats s = totals();
  st.states = 1 + s.states;
  st.distinct = s.distinct;
  st.end_states = s.end_states;
  st.max_depth = s.max_depth;
  st.pending = 0;
  if (!result.violation) {
    if (hit_time)
      st.truncated_by = "max_seconds";
    else if (hit_states)
      st.truncated_by = "max_states";
    else if (hit_depth)
      st.truncated_by = "max_depth";
  }
  st.exhausted = !result.violation && !hit_time && !hit_states && !hit_depth;
  st.seconds = since(t0);
  return result;
}

}  // namespace railcheck::verify::detail
