// railcheck check / replay for the worlds a model file names with `world = "..."`:
// plan-channels and plan-lifecycle (verify/plan), imm (verify/imm), bootstrap-auth
// (verify/bootstrap_auth). The search, the verdict, the
// exit codes and --json are the failover world's (cli/check_search.hpp); traces are step traces
// (verify/step_trace.hpp) that carry their model file.
#include <fmt/format.h>

#include "cli/check_search.hpp"
#include "cli/cli_output.hpp"
#include "cli/commands.hpp"
#include "models/toml_reader.hpp"
#include "verify/bootstrap_auth/auth_model.hpp"
#include "verify/imm/imm_world.hpp"
#include "verify/plan/channel_search.hpp"
#include "verify/plan/plan_models.hpp"
#include "verify/step_trace.hpp"

namespace railcheck::cli {
namespace {

using verify::Counterexample;
using verify::Invariant;

template <typename World>
std::vector<std::string> step_texts(const std::vector<typename World::ChoiceType>& steps) {
  std::vector<std::string> out;
  for (const auto& s : steps) out.push_back(to_string(s));
  return out;
}

// The channel world's counterexample also as a schedule trace, which `railcheck replay-sched`
// turns into its per-rank channel table.
std::vector<std::string> world_notes(const plan::ChannelAgreementWorld& w) {
  std::vector<std::string> out = {fmt::format(
      "the communicator as a schedule trace (saved as a .jsonl file, `railcheck replay-sched FILE --policy {}` "
      "shows each rank's channels):",
      w.policy().name)};
  const std::string t = w.sched_trace();
  for (std::size_t pos = 0; pos < t.size();) {
    const auto nl = t.find('\n', pos);
    out.push_back("  " + t.substr(pos, nl - pos));
    pos = nl == std::string::npos ? t.size() : nl + 1;
  }
  return out;
}
template <typename World>
std::vector<std::string> world_notes(const World&) {
  return {};
}

// One world's check: the command line over the model file's bounds, then run_check.
template <typename World, typename Model>
int check(const CheckOptions& o, std::string world, const Model& model, verify::SearchLimits limits,
          std::vector<std::string> names, std::span<const Invariant<World>> all, const World& root) {
  if (auto bad = apply_search_options(o, limits)) return bad_input("check", *bad);
  std::vector<std::string> unknown;
  const auto invariants = verify::select_invariants<World>(all, names, unknown);
  CheckJob<World> job;
  job.world = world;
  job.name = model.name;
  job.description = describe(model);
  job.limits = limits;
  job.invariant_names = names;
  job.invariants = invariants;
  job.explain = [&](const Counterexample<World>& v) {
    World w = root;
    std::vector<std::string> lines;
    for (std::size_t i = 0; i < v.steps.size(); ++i) {
      lines.push_back(fmt::format("{:>3}. {}", i + 1, to_string(v.steps[i])));
      w.apply(v.steps[i]);
    }
    for (auto& l : world_notes(w)) lines.push_back(std::move(l));
    return lines;
  };
  job.trace = [&](const Counterexample<World>& v) {
    return verify::write_step_trace({world, to_model_toml(model), v.invariant, v.message, step_texts<World>(v.steps)});
  };
  return run_check(o, std::move(job), root);
}

// --policy: the scheduling policy of a plan-channels model, the replay policy of an imm model.
int check_plan_channels(const CheckOptions& o, std::string_view text) {
  auto spec = plan::load_channel_model(text, o.file);
  if (!spec) return bad_input("check", spec.error().message());
  if (!o.policy.empty()) {
    if (!plan::policy_by_name(o.policy))
      return bad_input("check", fmt::format("--policy {}: expected one of {}", o.policy, plan::policy_names()));
    spec->model.policy = o.policy;
  }
  auto root = plan::ChannelAgreementWorld::make(spec->model);
  if (!root) return bad_input("check", root.error().message());
  return check(o, "plan-channels", spec->model, spec->limits, spec->invariants, plan::channel_invariants(),
               root.value());
}

int check_plan_lifecycle(const CheckOptions& o, std::string_view text) {
  auto spec = plan::load_lifecycle_model(text, o.file);
  if (!spec) return bad_input("check", spec.error().message());
  if (!o.policy.empty()) return bad_input("check", "--policy: a plan-lifecycle model has no policy");
  return check(o, "plan-lifecycle", spec->model, spec->limits, spec->invariants, plan::lifecycle_invariants(),
               plan::LifecycleWorld(spec->model.bound));
}

int check_imm(const CheckOptions& o, std::string_view text) {
  auto spec = imm::load_imm_model(text, o.file);
  if (!spec) return bad_input("check", spec.error().message());
  if (!o.policy.empty()) {
    const auto p = parse_replay_policy(o.policy);
    if (!p) return bad_input("check", fmt::format("--policy {}: expected naive, probe or resync", o.policy));
    spec->model.policy = *p;
  }
  return check(o, "imm", spec->model, spec->limits, spec->invariants, imm::imm_invariants(),
               imm::ImmWorld(spec->model));
}

int check_bootstrap_auth(const CheckOptions& o, std::string_view text) {
  auto spec = bootstrap::load_auth_model(text, o.file);
  if (!spec) return bad_input("check", spec.error().message());
  if (!o.policy.empty()) return bad_input("check", "--policy: a bootstrap-auth model has no policy");
  const auto invariants = bootstrap::auth_world_invariants();
  return check(o, "bootstrap-auth", spec->model, spec->limits, spec->invariants,
               std::span<const verify::Invariant<bootstrap::AuthWorld>>(invariants),
               bootstrap::AuthWorld(spec->model.config));
}

// Re-executes a step trace of one world and reports as `railcheck replay` does for failover.
template <typename World, typename Model>
int replay(const ReplayOptions& o, const verify::StepTrace& t, const Model& model, World w,
           std::span<const Invariant<World>> invariants) {
  fmt::print("replaying {} ({} steps): {} world, {}\n", o.trace, t.steps.size(), t.world, describe(model));
  if (!t.invariant.empty()) fmt::print("recorded: {} violated: {}\n", t.invariant, t.message);
  auto out = verify::replay_steps(w, t.steps, invariants);
  if (!out) return bad_input("replay", fmt::format("{}: {}", o.trace, out.error().message()));
  for (const auto& line : out.value().lines) fmt::print("{}\n", line);
  for (const auto& line : world_notes(w)) fmt::print("{}\n", line);
  if (out.value().invariant) {
    fmt::print("VIOLATION of {} after step {}: {}\n", *out.value().invariant, out.value().steps_run,
               *out.value().message);
    return kExitViolation;
  }
  fmt::print("replayed {} steps: no invariant violated\n", out.value().steps_run);
  return kExitOk;
}

}  // namespace

std::optional<int> check_named_world(const CheckOptions& o) {
  auto text = read_text_file(o.file, "model file", "");
  if (!text) return std::nullopt;  // the failover loader says what is wrong with it
  const auto world = verify::model_world(text.value());
  if (world == "plan-channels") return check_plan_channels(o, text.value());
  if (world == "plan-lifecycle") return check_plan_lifecycle(o, text.value());
  if (world == "imm") return check_imm(o, text.value());
  if (world == "bootstrap-auth") return check_bootstrap_auth(o, text.value());
  return std::nullopt;
}

void list_world_invariants() {
  auto list = [](std::string_view world, const auto& invs) {
    fmt::print("\n{} world (world = \"{}\"):\n", world, world);
    for (const auto& inv : invs) fmt::print("{:<32} {}\n", inv.name, inv.description);
  };
  list("plan-channels", plan::channel_invariants());
  list("plan-lifecycle", plan::lifecycle_invariants());
  list("imm", imm::imm_invariants());
  list("bootstrap-auth", bootstrap::auth_world_invariants());
}

std::optional<int> replay_named_world(const ReplayOptions& o) {
  auto text = read_text_file(o.trace, "trace file", "");
  if (!text) return std::nullopt;
  const auto world = verify::trace_world(text.value());
  if (world != "plan-channels" && world != "plan-lifecycle" && world != "imm" && world != "bootstrap-auth")
    return std::nullopt;
  auto t = verify::read_step_trace(text.value(), o.trace);
  if (!t) return bad_input("replay", t.error().message());
  if (!o.policy.empty() || o.sim || !o.sim_scenario.empty())
    return bad_input("replay", fmt::format("--policy, --sim and --sim-scenario apply to failover traces, not to a "
                                           "{} trace",
                                           *world));
  // The model inside the trace, read by its model-file loader; errors say "<trace> model_toml:<line>".
  const std::string where = o.trace + " model_toml";
  if (world == "plan-channels") {
    auto spec = plan::load_channel_model(t->model_toml, where);
    if (!spec) return bad_input("replay", spec.error().message());
    auto root = plan::ChannelAgreementWorld::make(spec->model);
    if (!root) return bad_input("replay", root.error().message());
    return replay(o, t.value(), spec->model, root.value(), plan::channel_invariants());
  }
  if (world == "plan-lifecycle") {
    auto spec = plan::load_lifecycle_model(t->model_toml, where);
    if (!spec) return bad_input("replay", spec.error().message());
    return replay(o, t.value(), spec->model, plan::LifecycleWorld(spec->model.bound), plan::lifecycle_invariants());
  }
  if (world == "bootstrap-auth") {
    auto spec = bootstrap::load_auth_model(t->model_toml, where);
    if (!spec) return bad_input("replay", spec.error().message());
    const auto invariants = bootstrap::auth_world_invariants();
    return replay(o, t.value(), spec->model, bootstrap::AuthWorld(spec->model.config),
                  std::span<const verify::Invariant<bootstrap::AuthWorld>>(invariants));
  }
  auto spec = imm::load_imm_model(t->model_toml, where);
  if (!spec) return bad_input("replay", spec.error().message());
  return replay(o, t.value(), spec->model, imm::ImmWorld(spec->model), imm::imm_invariants());
}

}  // namespace railcheck::cli
