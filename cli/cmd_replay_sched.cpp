// railcheck replay-sched: replay NCCL host-side plan scheduling on every rank of a trace, an
// NCCL COLL log (one per rank or merged) or a scheduling scenario, under one or more policies.
#include <fmt/format.h>

#include <filesystem>
#include <optional>

#include "cli/commands.hpp"
#include "engine/plan/nccl228_algo_proto_env.hpp"
#include "engine/plan/nccl_log_comms.hpp"
#include "engine/plan/nccl_log_import.hpp"
#include "engine/plan/sched_replay.hpp"
#include "models/sched_scenario.hpp"
#include "models/toml_reader.hpp"

namespace railcheck::cli {
namespace {

struct Loaded {
  plan::SchedInput input;
  std::vector<std::string> policies;
  std::vector<std::string> notes;
  // Logs whose launch boundaries are uncertain: the same operations, each its own launch. A
  // divergence or hang that this reading does not have is not reported as a fact.
  std::optional<plan::SchedInput> each_operation;
};

// NCCL_ALGO / NCCL_PROTO: the option, else the logs' ENV lines (nccl228_algo_proto_env.hpp).
Result<bool> apply_algo_proto(const ReplaySchedOptions& o, const std::vector<plan::LogFile>& logs, Loaded& out) {
  plan::AlgoProtoSettings option;
  if (o.nccl_env) {
    auto given = plan::settings_from_option(*o.nccl_env, "--nccl-env");
    if (!given) return given.error();
    option = std::move(given).value();
  }
  std::vector<plan::NamedLog> named;
  for (const auto& f : logs) named.push_back({f.name, f.text});
  auto applied = plan::apply_algo_proto_env(option, named, std::nullopt, out.input.shape);
  if (!applied) return applied.error();
  out.notes.insert(out.notes.end(), applied->notes.begin(), applied->notes.end());
  out.notes.insert(out.notes.end(), applied->conflicts.begin(), applied->conflicts.end());
  return true;
}

// Logs of several communicators (subgroups, splits): the one --comm names (a part of its id),
// else the one with the most operations; the notes list them all.
Result<std::vector<plan::LogFile>> pick_communicator(const ReplaySchedOptions& o,
                                                     const std::vector<plan::LogFile>& files,
                                                     std::vector<std::string>& notes) {
  auto comms = plan::split_by_communicator(files);
  if (comms.size() == 1 && !o.comm) return std::move(comms.front().files);
  const plan::LogCommunicator* chosen = &comms.front();
  if (o.comm) {
    chosen = nullptr;
    for (const auto& c : comms)
      if (c.id.find(*o.comm) != std::string::npos) {
        if (chosen != nullptr)
          return Error{fmt::format("--comm {} names more than one communicator: {}", *o.comm, plan::describe(comms)),
                       ""};
        chosen = &c;
      }
    if (chosen == nullptr)
      return Error{fmt::format("--comm {} names no communicator of the logs: {}", *o.comm, plan::describe(comms)), ""};
  }
  notes.push_back(
      fmt::format("the logs hold {}; replaying {} (choose with --comm)", plan::describe(comms), chosen->id));
  return chosen->files;
}

Result<Loaded> load_inputs(const ReplaySchedOptions& o) {
  const auto& paths = o.inputs;
  std::vector<plan::LogFile> files;
  for (const auto& p : paths) {
    auto text = read_text_file(p, "scheduling input", "a trace (.jsonl), NCCL logs or a scenario (.toml)");
    if (!text) return text.error();
    files.push_back(plan::LogFile{p, std::move(text).value()});
  }
  Loaded out;
  if (std::filesystem::path(paths.front()).extension() == ".toml") {
    if (paths.size() != 1) return Error{"give one scenario file at a time", ""};
    auto sc = plan::load_sched_scenario(files.front().text, paths.front());
    if (!sc) return sc.error();
    out.input = std::move(sc->input);
    out.policies = std::move(sc->policies);
    if (auto ok = apply_algo_proto(o, {}, out); !ok) return ok.error();
    return out;
  }
  if (plan::looks_like_nccl_log(files.front().text)) {
    auto picked = pick_communicator(o, files, out.notes);
    if (!picked) return picked.error();
    files = std::move(picked).value();
    auto log = plan::import_nccl_logs(files);
    if (!log) return log.error();
    out.input = std::move(log->input);
    out.notes.insert(out.notes.end(), log->notes.begin(), log->notes.end());
    if (log->boundaries_uncertain) {
      auto each = plan::import_nccl_logs(files, plan::LaunchReading::EachOperation);
      if (each) out.each_operation = std::move(each->input);
    }
    if (auto ok = apply_algo_proto(o, files, out); !ok) return ok.error();
    if (out.each_operation) {  // the same NCCL_ALGO / NCCL_PROTO settings on the other reading
      Loaded other{*out.each_operation, {}, {}, std::nullopt};
      if (auto ok = apply_algo_proto(o, files, other); !ok) return ok.error();
      out.each_operation = std::move(other.input);
    }
    return out;
  }
  if (paths.size() != 1) return Error{"give one trace file (it holds every rank's lines)", ""};
  auto trace = plan::parse_sched_trace(files.front().text, paths.front());
  if (!trace) return trace.error();
  out.input = std::move(trace).value();
  if (auto ok = apply_algo_proto(o, {}, out); !ok) return ok.error();
  return out;
}

}  // namespace

int cmd_replay_sched(const ReplaySchedOptions& o) {
  auto loaded = load_inputs(o);
  if (!loaded) {
    fmt::print(stderr, "railcheck replay-sched: {}\n", loaded.error().message());
    return kExitBadInput;
  }
  if (o.coll_channels) loaded->input.shape.coll_channels = *o.coll_channels;
  if (o.work_fifo_depth) loaded->input.shape.work_fifo_depth = *o.work_fifo_depth;
  std::vector<std::string> policies = o.policies;
  if (policies.empty()) policies = loaded->policies;
  if (policies.empty())
    for (const auto& p : plan::all_policies()) policies.emplace_back(p.name);
  for (const auto& note : loaded->notes) fmt::print("note: {}\n", note);
  plan::NcclVersion nccl = loaded->input.nccl.value_or(plan::NcclVersion::V2_28);
  if (o.nccl) {
    auto v = plan::nccl_version_from_name(*o.nccl);
    if (!v) {
      fmt::print(stderr, "railcheck replay-sched: --nccl {}: expected 2.18 or 2.28\n", *o.nccl);
      return kExitBadInput;
    }
    nccl = *v;
  }

  bool violation = false;
  for (const auto& name : policies) {
    auto policy = plan::policy_by_name(name);
    if (!policy) {
      fmt::print(stderr, "railcheck replay-sched: {}\n", policy.error().message());
      return kExitBadInput;
    }
    auto result = plan::replay(loaded->input, policy.value(), nccl);
    if (!result) {
      fmt::print(stderr, "railcheck replay-sched: {}\n", result.error().message());
      return kExitBadInput;
    }
    fmt::print("{}\n", plan::render_report(result.value(), o.max_ranks, o.max_rows));
    if (result->violation() && loaded->each_operation && result->agreement.first &&
        result->agreement.first->kind == plan::Divergence::Kind::Channels) {
      // The log cannot tell where this rank's launches end, and a channel divergence depends on
      // it: hold it against the other reading before calling it NCCL's.
      auto each = plan::replay(*loaded->each_operation, policy.value(), nccl);
      if (each && !each->violation()) {
        fmt::print(
            "INCONCLUSIVE under policy {}: the divergence above follows from launch boundaries this log cannot show "
            "(see the notes); with each operation its own launch, as PyTorch issues them, every rank agrees and every "
            "plan completes. Record with the profiler plugin or Flight Recorder dumps (railcheck triage) for the "
            "real boundaries.\n\n",
            name);
        continue;
      }
    }
    violation = violation || result->violation();
  }
  return violation ? kExitViolation : kExitOk;
}

}  // namespace railcheck::cli
