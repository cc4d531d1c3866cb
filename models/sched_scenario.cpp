// Scheduling scenario loader (sched_scenario.hpp).
#include "models/sched_scenario.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "engine/plan/schedule_policy.hpp"
#include "models/toml_reader.hpp"

namespace railcheck::plan {
namespace {

constexpr std::string_view kDocs = "see docs/plan.md, 'Scenario format'";

CommShape read_comm(TomlTable t) {
  t.allow_only({"nranks", "coll_channels", "p2p_channels", "p2p_channels_per_peer", "work_fifo_depth",
                "p2p_chunk_bytes", "persistent"});
  CommShape s;
  s.nranks = t.whole<std::uint32_t>("nranks", {1, 65536}).value_or(s.nranks);
  s.coll_channels = t.whole<std::uint32_t>("coll_channels", {1, kMaxChannels}).value_or(s.coll_channels);
  s.p2p_channels = t.whole<std::uint32_t>("p2p_channels", {1, kMaxChannels}).value_or(s.p2p_channels);
  s.p2p_channels_per_peer =
      t.whole<std::uint32_t>("p2p_channels_per_peer", {1, kMaxChannels}).value_or(s.p2p_channels_per_peer);
  s.work_fifo_depth = t.whole<std::uint32_t>("work_fifo_depth", {2, 1 << 24}).value_or(s.work_fifo_depth);
  s.p2p_chunk_bytes = t.byte_size("p2p_chunk_bytes", {1}).value_or(s.p2p_chunk_bytes);
  if (auto v = t.numeric("persistent", "true or false", true)) s.persistent = *v != 0;
  if (auto ok = validated(s); !ok) t.fail_here("a valid communicator", ok.error().what, ok.error().hint);
  return s;
}

std::vector<CollTask> read_colls(TomlTable& workload) {
  std::vector<CollTask> out;
  for (TomlTable c : workload.table_array("all_reduce")) {
    c.allow_only({"count", "dtype", "channels"});
    c.require({"count"});
    CollTask t;
    t.count = c.whole<std::uint64_t>("count", {1}).value_or(1);
    if (auto d = c.text("dtype")) {
      if (auto parsed = datatype_from_name(*d))
        t.dtype = *parsed;
      else
        c.fail("dtype", "a datatype such as \"float32\" or \"bfloat16\"", fmt::format("\"{}\"", *d));
    }
    t.channels = c.whole<std::uint32_t>("channels", {1, kMaxChannels}).value_or(0);
    out.push_back(t);
  }
  return out;
}

// MoE-style all-to-all: rank r sends bytes * weights[p mod len] to every rank p (itself
// included, as torch's all_to_all_single does), so what a rank moves depends on who it is.
std::vector<P2pTask> all_to_all(std::uint32_t rank, std::uint32_t nranks, std::uint64_t bytes,
                                const std::vector<std::uint64_t>& weights) {
  std::vector<P2pTask> out;
  for (std::uint32_t p = 0; p < nranks; ++p) {
    out.push_back(P2pTask{P2pDir::Send, p, bytes * weights[p % weights.size()], 0});
    out.push_back(P2pTask{P2pDir::Recv, p, bytes * weights[rank % weights.size()], 0});
  }
  return out;
}

// TomlReader's default hint points at the SimGrid scenario docs; these keys are in ours.
Error in_our_docs(Error e) {
  constexpr std::string_view kTheirs = "docs/scenarios.md";
  if (auto at = e.hint.find(kTheirs); at != std::string::npos) e.hint.replace(at, kTheirs.size(), "docs/plan.md");
  return e;
}

}  // namespace

Result<SchedScenario> load_sched_scenario(std::string_view toml_text, const std::string& file) {
  auto doc = parse_toml(toml_text, file, kDocs);
  if (!doc) return doc.error();
  TomlReader reader(file);
  TomlTable root(reader, &doc.value(), "");
  root.allow_only({"name", "description", "nccl", "policies", "comm", "workload"});
  SchedScenario sc;
  sc.name = root.text("name").value_or(std::filesystem::path(file).stem().string());
  sc.description = root.text("description").value_or("");
  if (auto v = root.text("nccl")) {
    sc.input.nccl = nccl_version_from_name(*v);
    if (!sc.input.nccl) root.fail("nccl", "\"2.18\" or \"2.28\"", *v);
  }
  if (const auto* arr = doc.value()["policies"].as_array()) {
    for (const auto& node : *arr) {
      auto name = node.value<std::string>();
      if (!name || !policy_by_name(*name)) {
        root.fail_at(node, "policies", "a list of policy names (" + policy_names() + ")", describe_value(node));
        break;
      }
      sc.policies.push_back(*name);
    }
  } else if (doc.value().contains("policies")) {
    root.fail("policies", "a list of policy names", "not a list");
  }
  const CommShape shape = read_comm(root.table("comm"));
  TomlTable workload = root.table("workload");
  workload.allow_only({"steps", "p2p_done_before_end", "all_to_all", "all_reduce"});
  const auto steps = workload.whole<std::uint32_t>("steps", {1, 1000}).value_or(1);
  const bool done = workload.numeric("p2p_done_before_end", "true or false", true).value_or(0) != 0;
  TomlTable a2a = workload.table("all_to_all");
  a2a.allow_only({"bytes", "weights"});
  const auto bytes = a2a.byte_size("bytes", {0}).value_or(0);
  auto weights = a2a.whole_array("weights", {0, 1 << 20});
  if (weights.empty()) weights.push_back(1);
  const auto colls = read_colls(workload);
  // An all-to-all makes 2 * nranks^2 tasks per step; past this a replay would exhaust memory.
  constexpr std::uint64_t kMaxTasks = 1ULL << 25;
  const std::uint64_t tasks = (a2a.present() ? 2ULL * shape.nranks * shape.nranks : 0) * steps;
  if (tasks > kMaxTasks)
    workload.fail_here(fmt::format("at most {} p2p tasks in all", kMaxTasks),
                       fmt::format("{} (2 * nranks^2 * steps)", tasks), "lower nranks or steps");
  if (reader.failed()) return in_our_docs(*reader.error());

  sc.input.source = "scenario";
  sc.input.shape = shape;
  for (std::uint32_t r = 0; r < shape.nranks; ++r) {
    RankStream stream{r, {}};
    for (std::uint32_t s = 0; s < steps; ++s) {
      TaskGroup g;
      if (a2a.present()) g.p2ps = all_to_all(r, shape.nranks, bytes, weights);
      g.colls = colls;
      g.p2p_done_before_end = done;
      stream.groups.push_back(std::move(g));
    }
    sc.input.ranks.push_back(std::move(stream));
  }
  return sc;
}

}  // namespace railcheck::plan
