// railcheck replay-sched: replay NCCL host-side plan scheduling on every rank of a trace, an
// NCCL COLL log (one per rank or merged) or a scheduling scenario, under one or more policies.
// The readings and the verdict are engine/plan's (nccl_log_import.hpp, sched_verdict.hpp): this
// file reads the files, applies the options and prints.
#include <fmt/format.h>

#include <filesystem>
#include <optional>

#include "cli/commands.hpp"
#include "engine/plan/nccl_log_comms.hpp"
#include "engine/plan/nccl_log_import.hpp"
#include "engine/plan/rank_inputs.hpp"
#include "engine/plan/sched_replay.hpp"
#include "engine/plan/sched_verdict.hpp"
#include "models/sched_scenario.hpp"
#include "models/toml_reader.hpp"

namespace railcheck::cli {
namespace {

struct Loaded {
  plan::SchedInput input;
  std::vector<std::string> policies;
  std::vector<std::string> notes;
  // Logs whose launch boundaries are uncertain: the same operations, each its own launch
  // (plan::import_nccl_log_readings), weighed by plan::replay_and_judge.
  std::optional<plan::SchedInput> each_operation;
};

// The settings given outside the logs: --nccl-env and --env-txt (nccl_rank_env.hpp).
Result<plan::RankEnvSources> given_settings(const ReplaySchedOptions& o) {
  plan::RankEnvSources given;
  if (o.nccl_env) {
    auto parsed = plan::env_from_option(*o.nccl_env, "--nccl-env");
    if (!parsed) return parsed.error();
    given.option = std::move(parsed).value();
  }
  if (o.env_txt) {
    auto text = read_text_file(*o.env_txt, "env.txt", "a recording's env.txt");
    if (!text) return text.error();
    given.env_txt = plan::env_from_env_txt(text.value(), *o.env_txt);
  }
  return given;
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
  auto given = given_settings(o);
  if (!given) return given.error();
  Loaded out;
  auto without_logs = [&]() -> Result<Loaded> {  // a trace or a scenario: every rank from the given settings
    auto notes = plan::model_each_rank(given.value(), out.input);
    if (!notes) return notes.error();
    out.notes.insert(out.notes.end(), notes->begin(), notes->end());
    return std::move(out);
  };
  if (std::filesystem::path(paths.front()).extension() == ".toml") {
    if (paths.size() != 1) return Error{"give one scenario file at a time", ""};
    auto sc = plan::load_sched_scenario(files.front().text, paths.front());
    if (!sc) return sc.error();
    out.input = std::move(sc->input);
    out.policies = std::move(sc->policies);
    return without_logs();
  }
  if (plan::looks_like_nccl_log(files.front().text)) {
    auto picked = pick_communicator(o, files, out.notes);
    if (!picked) return picked.error();
    files = std::move(picked).value();
    auto log = plan::import_nccl_log_readings(files, given.value());
    if (!log) return log.error();
    out.input = std::move(log->as_logged.input);
    out.notes.insert(out.notes.end(), log->as_logged.notes.begin(), log->as_logged.notes.end());
    out.each_operation = std::move(log->each_operation);
    return out;
  }
  if (paths.size() != 1) return Error{"give one trace file (it holds every rank's lines)", ""};
  auto trace = plan::parse_sched_trace(files.front().text, paths.front());
  if (!trace) return trace.error();
  out.input = std::move(trace).value();
  return without_logs();
}

}  // namespace

int cmd_replay_sched(const ReplaySchedOptions& o) {
  auto loaded = load_inputs(o);
  if (!loaded) {
    fmt::print(stderr, "railcheck replay-sched: {}\n", loaded.error().message());
    return kExitBadInput;
  }
  // The overrides are the communicator's: every rank's shape takes them, in both readings.
  auto override = [&](plan::CommShape& s) {
    if (o.coll_channels) s.coll_channels = *o.coll_channels;
    if (o.work_fifo_depth) s.work_fifo_depth = *o.work_fifo_depth;
  };
  for (plan::SchedInput* in : {&loaded->input, loaded->each_operation ? &*loaded->each_operation : nullptr}) {
    if (in == nullptr) continue;
    override(in->shape);
    for (auto& s : in->rank_shapes) override(s);
  }
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

  auto verdict = plan::SchedVerdict::Kind::Healthy;
  for (const auto& name : policies) {
    auto policy = plan::policy_by_name(name);
    if (!policy) {
      fmt::print(stderr, "railcheck replay-sched: {}\n", policy.error().message());
      return kExitBadInput;
    }
    auto judged = plan::replay_and_judge(loaded->input, loaded->each_operation ? &*loaded->each_operation : nullptr,
                                         policy.value(), nccl);
    if (!judged) {
      fmt::print(stderr, "railcheck replay-sched: {}\n", judged.error().message());
      return kExitBadInput;
    }
    fmt::print("{}\n", plan::render_report(judged->as_logged, o.max_ranks, o.max_rows));
    if (judged->show_each_operation)
      fmt::print("the same operations, each its own launch (launch boundaries uncertain; see the notes):\n{}\n",
                 plan::render_report(*judged->each_operation, o.max_ranks, o.max_rows));
    for (const auto& line : judged->verdict.lines) fmt::print("{}\n", line);
    fmt::print("\n");
    verdict = plan::worse(verdict, judged->verdict.kind);
  }
  switch (verdict) {
    case plan::SchedVerdict::Kind::Healthy: return kExitOk;
    case plan::SchedVerdict::Kind::Divergent: return kExitViolation;
    case plan::SchedVerdict::Kind::Inconclusive: return kExitInconclusive;
  }
  return kExitInternal;
}

}  // namespace railcheck::cli
