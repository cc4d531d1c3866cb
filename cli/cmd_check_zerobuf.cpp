// railcheck check / replay for the zero-buffer worlds (verify/zerobuf): a model file whose
// `world` is "zerobuf-flags", "zerobuf-sma", "zerobuf-ll" or "zerobuf-direct", and the traces their
// counterexamples leave.
#include <fmt/format.h>

#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/cli_output.hpp"
#include "cli/commands.hpp"
#include "models/toml_reader.hpp"
#include "verify/zerobuf/zerobuf_check.hpp"

namespace railcheck::cli {
namespace {

using namespace railcheck::verify;
using namespace railcheck::verify::zerobuf;

bool names_zerobuf(const std::string& path) {
  auto text = read_text_file(path, "file", "");
  return text.ok() && names_zerobuf_world(text.value());
}

}  // namespace

bool is_zerobuf_model_file(const std::string& path) { return names_zerobuf(path); }

void list_zerobuf_invariants() {
  for (const auto k : kZerobufWorlds) {
    fmt::print("\n{} world (world = \"{}\"):\n", world_name(k), world_name(k));
    for (const auto& line : invariant_lines(k)) fmt::print("{}\n", line);
  }
}

int cmd_check_zerobuf(const CheckOptions& o) {
  auto loaded = load_zerobuf_spec_file(o.file);
  if (!loaded) {
    fmt::print(stderr, "railcheck check: {}\n", loaded.error().message());
    return kExitBadInput;
  }
  ZerobufSpec spec = loaded.value();
  if (!o.policy.empty()) {
    fmt::print(stderr, "railcheck check: --policy applies to failover models, not to {}\n", world_name(spec.world));
    return kExitBadInput;
  }
  if (!o.symmetry.empty()) {
    fmt::print(
        stderr,
        "railcheck check: --symmetry applies to the failover world only (the {} world has no symmetry reduction)\n",
        world_name(spec.world));
    return kExitBadInput;
  }
  if (!o.mode.empty()) {
    if (o.mode != "dfs" && o.mode != "bfs" && o.mode != "random") {
      fmt::print(stderr, "railcheck check: --mode {}: expected dfs, bfs or random\n", o.mode);
      return kExitBadInput;
    }
    spec.limits.mode = o.mode == "dfs" ? SearchMode::Dfs : o.mode == "bfs" ? SearchMode::Bfs : SearchMode::Random;
  }
  if (o.max_states) spec.limits.max_states = *o.max_states;
  if (o.max_depth) spec.limits.max_depth = *o.max_depth;
  if (o.max_seconds) spec.limits.max_seconds = *o.max_seconds;
  if (o.walks) spec.limits.walks = *o.walks;
  if (o.seed) spec.limits.seed = *o.seed;
  if ((o.walks || o.seed) && spec.limits.mode != SearchMode::Random) {
    fmt::print(stderr, "railcheck check: {} applies to --mode random only\n", o.walks ? "--walks" : "--seed");
    return kExitBadInput;
  }
  if (auto bad = check_threads_error(o, spec.limits.mode == SearchMode::Bfs)) {
    fmt::print(stderr, "railcheck check: {}\n", *bad);
    return kExitBadInput;
  }
  if (o.threads) spec.limits.threads = *o.threads;
  if (o.max_states && *o.max_states == 0) {
    fmt::print(stderr, "railcheck check: --max-states 0 explores nothing; give at least 1\n");
    return kExitBadInput;
  }
  const std::string& name = model_name(spec);
  fmt::print("railcheck check {} ({}): {}\n", name, world_name(spec.world), describe(spec));
  fmt::print("search: {}, up to {} states, depth {}; invariants: {}\n",
             spec.limits.mode == SearchMode::Dfs   ? "dfs"
             : spec.limits.mode == SearchMode::Bfs ? "bfs"
                                                   : "random",
             spec.limits.max_states, spec.limits.max_depth,
             spec.invariants.empty() ? "all" : fmt::format("{}", fmt::join(spec.invariants, ", ")));
  const std::clock_t cpu0 = std::clock();
  auto checked = check_zerobuf(spec);
  if (!checked) {
    fmt::print(stderr, "railcheck check: {}\n", checked.error().message());
    return kExitBadInput;
  }
  const ZerobufOutcome& out = checked.value();
  const SearchStats& st = out.stats;
  const double cpu = static_cast<double>(std::clock() - cpu0) / CLOCKS_PER_SEC;
  fmt::print("explored {} states ({} distinct), depth {}, {} end states, {:.2f} s, {:.2f} s CPU\n", st.states,
             st.distinct, st.max_depth, st.end_states, st.seconds, cpu);
  nlohmann::json j{{"model", name},
                   {"world", std::string(world_name(spec.world))},
                   {"description", describe(spec)},
                   {"states", st.states},
                   {"distinct_states", st.distinct},
                   {"end_states", st.end_states},
                   {"max_depth", st.max_depth},
                   {"seconds", st.seconds},
                   {"cpu_seconds", cpu},
                   {"exhausted", st.exhausted}};
  if (!st.exhausted && !out.invariant) j["stopped_by"] = st.truncated_by;
  int rc = kExitOk;
  if (out.invariant) {
    fmt::print("VIOLATION of {}: {}\n", *out.invariant, *out.message);
    fmt::print("counterexample, {} steps:\n", out.steps.size());
    const std::string trace_text = write_zerobuf_trace(spec, out);
    if (auto t = read_zerobuf_trace(trace_text, o.trace_path))
      if (auto r = replay_zerobuf(t.value()))
        for (const auto& line : r.value().lines) fmt::print("{}\n", line);
    if (write_text(o.trace_path, trace_text)) {
      fmt::print("trace written to {}; replay it with: railcheck replay {}\n", o.trace_path, o.trace_path);
    } else {
      fmt::print(stderr, "railcheck check: cannot write the trace to {}\n", o.trace_path);
    }
    j["violation"] = {{"invariant", *out.invariant}, {"message", *out.message}, {"steps", out.steps.size()}};
    rc = kExitViolation;
  } else if (st.exhausted) {
    fmt::print("bound exhausted: no invariant violated\n");
  } else if (spec.limits.mode == SearchMode::Random && st.truncated_by == "random walks") {
    fmt::print("no violation in {} random walks (sampled, not exhaustive)\n", spec.limits.walks);
  } else {
    fmt::print(
        "NOT exhausted: stopped at {} (raise it with --max-states / --max-depth / --max-seconds); no violation so "
        "far\n",
        st.truncated_by);
    rc = kExitInconclusive;
  }
  if (!o.json_path.empty() && !write_text(o.json_path, j.dump(2) + "\n")) {
    fmt::print(stderr, "railcheck check: cannot write {}\n", o.json_path);
    return kExitBadInput;
  }
  return rc;
}

bool is_zerobuf_trace_file(const std::string& path) { return names_zerobuf(path); }

int cmd_replay_zerobuf(const ReplayOptions& o) {
  if (!o.policy.empty() || o.sim || !o.sim_scenario.empty()) {
    fmt::print(stderr, "railcheck replay: --policy, --sim and --sim-scenario apply to failover traces only\n");
    return kExitBadInput;
  }
  auto text = read_text_file(o.trace, "trace file", "a trace written by railcheck check");
  if (!text) {
    fmt::print(stderr, "railcheck replay: {}\n", text.error().message());
    return kExitBadInput;
  }
  auto t = read_zerobuf_trace(text.value(), o.trace);
  if (!t) {
    fmt::print(stderr, "railcheck replay: {}\n", t.error().message());
    return kExitBadInput;
  }
  fmt::print("replaying {} ({} steps): {}\n", o.trace, t.value().steps.size(), describe(t.value().spec));
  if (!t.value().invariant.empty()) fmt::print("recorded: {} violated: {}\n", t.value().invariant, t.value().message);
  auto r = replay_zerobuf(t.value());
  if (!r) {
    fmt::print(stderr, "railcheck replay: {}\n", r.error().message());
    return kExitBadInput;
  }
  for (const auto& line : r.value().lines) fmt::print("{}\n", line);
  if (r.value().invariant) {
    fmt::print("VIOLATION of {} after step {}: {}\n", *r.value().invariant, r.value().steps_run, *r.value().message);
    return kExitViolation;
  }
  fmt::print("replayed {} steps: no invariant violated\n", r.value().steps_run);
  return kExitOk;
}

}  // namespace railcheck::cli
