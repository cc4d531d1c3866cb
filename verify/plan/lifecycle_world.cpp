// Plan-lifecycle world (lifecycle_world.hpp): depth-first over every interleaving.
#include "verify/plan/lifecycle_world.hpp"

#include <fmt/format.h>

#include "engine/plan/plan_lifecycle.hpp"

namespace railcheck::plan {
namespace {

struct LaunchKind {
  bool persistent = false;
  bool has_proxy_ops = false;
};

struct State {
  PlanLifecycle life{false};
  std::uint32_t next = 0;              // program counter: 2*i = prepare launch i, 2*i+1 = its kernel launch
  std::vector<std::uint32_t> plan_of;  // launch -> plan id
  std::vector<char> graph_destroyed;   // launch -> its graph is gone
  std::vector<std::string> steps;
};

class Explorer {
 public:
  Explorer(const LifecycleBound& bound, std::vector<LaunchKind> kinds, bool blocking)
      : bound_(bound), kinds_(std::move(kinds)), blocking_(blocking) {}

  LifecycleCheckResult run() {
    State s;
    s.life = PlanLifecycle(blocking_);
    s.graph_destroyed.assign(kinds_.size(), 0);
    dfs(s);
    return result_;
  }

 private:
  bool fail(State& s, const Error& e) {
    result_.violation = e.what;
    result_.steps = s.steps;
    return true;
  }

  // Runs one step on a copy; returns true when a violation was found below it.
  template <typename Step>
  bool branch(const State& s, std::string label, Step step) {
    State t = s;
    t.steps.push_back(std::move(label));
    if (auto err = step(t)) return fail(t, *err);
    return dfs(t);
  }

  bool program_step(const State& s) {
    const std::uint32_t launch = s.next / 2;
    if (s.next % 2 == 0) {
      return branch(s, fmt::format("prepare launch {}", launch), [&](State& t) -> std::optional<Error> {
        auto ids = t.life.prepare({PlanSpec{kinds_[launch].persistent, kinds_[launch].has_proxy_ops}});
        if (!ids) return ids.error();
        t.plan_of.push_back(ids.value().front());
        ++t.next;
        return std::nullopt;
      });
    }
    return branch(s, fmt::format("launch kernel of plan {}", s.plan_of[launch]), [&](State& t) -> std::optional<Error> {
      if (auto ok = t.life.launch_kernel(t.plan_of[launch]); !ok) return ok.error();
      ++t.next;
      return std::nullopt;
    });
  }

  // The end of the communicator: the streams drain, graphs go, the last poll runs.
  bool drain(const State& s) {
    ++result_.paths;
    State t = s;
    t.steps.push_back("drain: host callbacks, graph destruction, final poll");
    for (std::uint32_t id = 0; id < t.life.plan_count(); ++id)
      if (t.life.host_callback_pending(id))
        if (auto ok = t.life.run_host_callback(id); !ok) return fail(t, ok.error());
    for (std::uint32_t l = 0; l < t.plan_of.size(); ++l)
      if (kinds_[l].persistent && !t.graph_destroyed[l])
        if (auto ok = t.life.destroy_graph({t.plan_of[l]}); !ok) return fail(t, ok.error());
    if (auto ok = t.life.poll_callbacks(); !ok) return fail(t, ok.error());
    if (auto ok = t.life.check_all_reclaimed(); !ok) return fail(t, ok.error());
    return false;
  }

  bool dfs(const State& s) {
    if (s.next < 2 * kinds_.size() && program_step(s)) return true;
    for (std::uint32_t id = 0; id < s.life.plan_count(); ++id) {
      if (!s.life.host_callback_pending(id)) continue;
      if (branch(s, fmt::format("host callback of plan {}", id), [&](State& t) -> std::optional<Error> {
            if (auto ok = t.life.run_host_callback(id); !ok) return ok.error();
            return std::nullopt;
          }))
        return true;
    }
    // A graph can be destroyed once its kernel was launched and its host callback ran.
    for (std::uint32_t l = 0; l < s.plan_of.size(); ++l) {
      const auto id = s.plan_of[l];
      if (!kinds_[l].persistent || s.graph_destroyed[l] || s.next <= 2 * l + 1 || s.life.host_callback_pending(id))
        continue;
      if (branch(s, fmt::format("destroy graph of plan {}", id), [&](State& t) -> std::optional<Error> {
            t.graph_destroyed[l] = 1;
            if (auto ok = t.life.destroy_graph({id}); !ok) return ok.error();
            return std::nullopt;
          }))
        return true;
    }
    if (bound_.poll_anywhere && s.life.queued() != 0 &&
        branch(s, "poll callbacks (another thread)", [&](State& t) -> std::optional<Error> {
          if (auto ok = t.life.poll_callbacks(); !ok) return ok.error();
          return std::nullopt;
        }))
      return true;
    if (s.next == 2 * kinds_.size()) return drain(s);
    return false;
  }

  LifecycleBound bound_;
  std::vector<LaunchKind> kinds_;
  bool blocking_;
  LifecycleCheckResult result_;
};

}  // namespace

LifecycleCheckResult check_lifecycle_world(const LifecycleBound& bound) {
  LifecycleCheckResult total;
  const std::uint32_t kinds_per_launch = 4;  // persistent x has_proxy_ops
  std::uint64_t combos = 1;
  for (std::uint32_t i = 0; i < bound.launches; ++i) combos *= kinds_per_launch;
  for (int blocking = 0; blocking < 2; ++blocking) {
    for (std::uint64_t code = 0; code < combos; ++code) {
      std::vector<LaunchKind> kinds;
      for (std::uint64_t rest = code, i = 0; i < bound.launches; ++i, rest /= kinds_per_launch)
        kinds.push_back(LaunchKind{(rest & 1U) != 0, (rest & 2U) != 0});
      auto r = Explorer(bound, kinds, blocking != 0).run();
      total.paths += r.paths;
      if (r.violation) {
        std::string setup = fmt::format("launch_blocking={}", blocking != 0);
        for (std::size_t i = 0; i < kinds.size(); ++i)
          setup += fmt::format(", launch {}: {}{}", i, kinds[i].persistent ? "persistent" : "non-persistent",
                               kinds[i].has_proxy_ops ? " with proxy ops" : "");
        r.steps.insert(r.steps.begin(), setup);
        r.paths = total.paths;
        return r;
      }
    }
  }
  return total;
}

}  // namespace railcheck::plan
