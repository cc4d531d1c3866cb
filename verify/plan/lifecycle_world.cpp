// Plan-lifecycle world (lifecycle_world.hpp).
#include "verify/plan/lifecycle_world.hpp"

#include <fmt/format.h>

#include <array>

#include "engine/core/state_hash.hpp"
#include "verify/explorer.hpp"

namespace railcheck::plan {

std::string to_string(const LifecycleStep& s) {
  using K = LifecycleStep::Kind;
  switch (s.kind) {
    case K::Blocking: return fmt::format("launch blocking {}", s.value != 0 ? "on" : "off");
    case K::LaunchKind:
      return fmt::format("launch {} {} {}", s.a, (s.value & 1U) != 0 ? "persistent" : "non-persistent",
                         (s.value & 2U) != 0 ? "with proxy ops" : "without proxy ops");
    case K::Prepare: return fmt::format("prepare launch {}", s.a);
    case K::LaunchKernel: return fmt::format("launch kernel of plan {}", s.b);
    case K::HostCallback: return fmt::format("host callback of plan {}", s.b);
    case K::DestroyGraph: return fmt::format("destroy graph of plan {}", s.b);
    case K::Poll: return "poll callbacks (another thread)";
    case K::Drain: return "drain: host callbacks, graph destruction, final poll";
  }
  return "?";
}

void LifecycleWorld::program_choices(std::vector<LifecycleStep>& out) const {
  using K = LifecycleStep::Kind;
  const std::uint32_t launch = next_ / 2;
  if (next_ < 2 * kinds_.size())
    out.push_back(next_ % 2 == 0 ? LifecycleStep{K::Prepare, launch, 0, 0}
                                 : LifecycleStep{K::LaunchKernel, launch, plan_of_[launch], 0});
}

std::vector<LifecycleStep> LifecycleWorld::choices() const {
  using K = LifecycleStep::Kind;
  std::vector<LifecycleStep> out;
  if (violation_ || drained_) return out;
  if (!blocking_) return {{K::Blocking, 0, 0, 0}, {K::Blocking, 0, 0, 1}};
  if (kinds_.size() < bound_.launches) {
    for (std::uint32_t v = 0; v < 4; ++v)
      out.push_back({K::LaunchKind, static_cast<std::uint32_t>(kinds_.size()), 0, v});
    return out;
  }
  program_choices(out);
  for (std::uint32_t id = 0; id < life_.plan_count(); ++id)
    if (life_.host_callback_pending(id)) out.push_back({K::HostCallback, 0, id, 0});
  // A graph can be destroyed once its kernel was launched and its host callback ran.
  for (std::uint32_t l = 0; l < plan_of_.size(); ++l) {
    const auto id = plan_of_[l];
    if (!kinds_[l].persistent || graph_destroyed_[l] != 0 || next_ <= 2 * l + 1 || life_.host_callback_pending(id))
      continue;
    out.push_back({K::DestroyGraph, l, id, 0});
  }
  if (bound_.poll_anywhere && life_.queued() != 0) out.push_back({K::Poll, 0, 0, 0});
  if (next_ == 2 * kinds_.size()) out.push_back({K::Drain, 0, 0, 0});
  return out;
}

Result<bool> LifecycleWorld::drain() {
  for (std::uint32_t id = 0; id < life_.plan_count(); ++id)
    if (life_.host_callback_pending(id))
      if (auto ok = life_.run_host_callback(id); !ok) return ok.error();
  for (std::uint32_t l = 0; l < plan_of_.size(); ++l)
    if (kinds_[l].persistent && graph_destroyed_[l] == 0)
      if (auto ok = life_.destroy_graph({plan_of_[l]}); !ok) return ok.error();
  if (auto ok = life_.poll_callbacks(); !ok) return ok.error();
  return life_.check_all_reclaimed();
}

void LifecycleWorld::apply(const LifecycleStep& s) {
  using K = LifecycleStep::Kind;
  std::optional<Error> err;
  auto check = [&](const auto& r) {
    if (!r) err = r.error();
  };
  switch (s.kind) {
    case K::Blocking:
      blocking_ = s.value != 0;
      life_ = PlanLifecycle(*blocking_);
      break;
    case K::LaunchKind:
      kinds_.push_back(LaunchKind{(s.value & 1U) != 0, (s.value & 2U) != 0});
      graph_destroyed_.push_back(0);
      break;
    case K::Prepare: {
      auto ids = life_.prepare({PlanSpec{kinds_[s.a].persistent, kinds_[s.a].has_proxy_ops}});
      check(ids);
      if (ids) plan_of_.push_back(ids.value().front());
      ++next_;
      break;
    }
    case K::LaunchKernel:
      check(life_.launch_kernel(s.b));
      ++next_;
      break;
    case K::HostCallback: check(life_.run_host_callback(s.b)); break;
    case K::DestroyGraph:
      graph_destroyed_[s.a] = 1;
      check(life_.destroy_graph({s.b}));
      break;
    case K::Poll: check(life_.poll_callbacks()); break;
    case K::Drain:
      drained_ = true;
      check(drain());
      break;
  }
  if (err) violation_ = err->what;
}

std::uint64_t LifecycleWorld::fingerprint() const {
  StateHasher h;
  h.add(blocking_);
  for (const auto& k : kinds_) {
    h.add(k.persistent);
    h.add(k.has_proxy_ops);
  }
  h.add(next_);
  for (const auto id : plan_of_) h.add(id);
  for (const char g : graph_destroyed_) h.add(g != 0);
  for (std::uint32_t id = 0; id < life_.plan_count(); ++id) {
    h.add(life_.state(id));
    h.add(life_.host_callback_pending(id));
  }
  h.add(life_.persistent_refs());
  h.add(life_.queued());
  h.add(drained_);
  h.add(violation_.has_value());
  return h.value();
}

std::span<const verify::Invariant<LifecycleWorld>> lifecycle_invariants() {
  static const std::array<verify::Invariant<LifecycleWorld>, 1> kAll = {verify::Invariant<LifecycleWorld>{
      "plan-lifecycle",
      "a plan's reclaim is queued once and runs once, nothing reads a plan after its reclaim, and persistentRefs "
      "returns to zero",
      [](const LifecycleWorld& w, bool) { return w.violation(); }}};
  return kAll;
}

LifecycleCheckResult check_lifecycle_world(const LifecycleBound& bound) {
  verify::SearchLimits limits;
  limits.max_states = 1ULL << 40;
  const auto r = verify::explore<LifecycleWorld>(LifecycleWorld(bound), lifecycle_invariants(), limits);
  LifecycleCheckResult out;
  out.paths = r.stats.end_states;
  if (r.violation) {
    out.violation = r.violation->message;
    for (const auto& s : r.violation->steps) out.steps.push_back(to_string(s));
  }
  return out;
}

}  // namespace railcheck::plan
