// Reads `railcheck check` input: a model file, or a scenario file from which a model is derived.
#include <fmt/format.h>

#include <array>
#include <filesystem>

#include "models/engine_table.hpp"
#include "models/scenario.hpp"
#include "models/toml_reader.hpp"
#include "verify/check_spec.hpp"
#include "verify/failover_invariants.hpp"

namespace railcheck::verify {
namespace {

constexpr std::string_view kOrderedAssumption =
    "true: the failover engine assumes in-order delivery on each path (RC, or FI_ORDER_SAS on libfabric)";
constexpr std::string_view kDocs = "see docs/verify.md for the model file format";

constexpr std::array<std::pair<SearchMode, std::string_view>, 4> kModes = {{{SearchMode::Dfs, "dfs"},
                                                                            {SearchMode::Bfs, "bfs"},
                                                                            {SearchMode::Random, "random"},
                                                                            {SearchMode::ParallelDfs, "pdfs"}}};

void read_world(TomlTable t, FailoverModel& m) {
  t.allow_only({"paths", "messages", "bidirectional", "recv_group", "ordered", "delay_recv_completions",
                "interleave_user_calls", "faults_during_handshake"});
  m.paths = t.whole<std::uint32_t>("paths", {1, 8}).value_or(m.paths);
  m.messages = t.whole<std::uint32_t>("messages", {1, 64}).value_or(m.messages);
  m.recv_group = t.whole<std::uint32_t>("recv_group", {1, 8}).value_or(m.recv_group);
  if (m.messages % m.recv_group != 0)
    t.fail("recv_group", fmt::format("a divisor of messages = {}", m.messages), fmt::format("{}", m.recv_group));
  m.bidirectional = read_flag(t, "bidirectional").value_or(m.bidirectional);
  m.ordered = read_flag(t, "ordered").value_or(m.ordered);
  // The failover engine assumes each path delivers in order (RC, or FI_ORDER_SAS on the
  // libfabric backend): its receiver treats an out-of-order message as a sequence gap and fails
  // the connection. An unordered world would report that assumption, not a bug (docs/verify.md).
  if (!m.ordered)
    t.fail("ordered", std::string(kOrderedAssumption), "false",
           "the engine is not built for an unordered transport; keep ordered = true");
  m.delay_recv_completions = read_flag(t, "delay_recv_completions").value_or(m.delay_recv_completions);
  m.interleave_user_calls = read_flag(t, "interleave_user_calls").value_or(m.interleave_user_calls);
  m.faults_during_handshake = read_flag(t, "faults_during_handshake").value_or(m.faults_during_handshake);
}

void read_bounds(TomlTable t, FailoverModel& m) {
  t.allow_only({"link_failures", "link_repairs", "losses", "timer_races", "horizon_ms"});
  m.link_failures = t.whole<std::uint32_t>("link_failures", {0, 8}).value_or(m.link_failures);
  m.link_repairs = t.whole<std::uint32_t>("link_repairs", {0, 8}).value_or(m.link_repairs);
  m.losses = t.whole<std::uint32_t>("losses", {0, 16}).value_or(m.losses);
  m.timer_races = t.whole<std::uint32_t>("timer_races", {0, 64}).value_or(m.timer_races);
  m.horizon = t.millis("horizon_ms", {1, 3.6e6}).value_or(m.horizon);
}

}  // namespace

std::optional<bool> read_flag(TomlTable& t, std::string_view key) {
  auto v = t.numeric(key, "true or false", true);
  if (!v) return std::nullopt;
  if (*v != 0 && *v != 1) {
    t.fail(key, "true or false", fmt::format("{}", *v));
    return std::nullopt;
  }
  return *v == 1;
}

void read_search_table(TomlTable t, SearchLimits& l) {
  t.allow_only({"mode", "max_states", "max_depth", "walks", "seed"});
  if (auto mode = t.text("mode")) {
    bool found = false;
    for (const auto& [k, name] : kModes)
      if (name == *mode) {
        l.mode = k;
        found = true;
      }
    if (!found) t.fail("mode", "\"dfs\", \"bfs\", \"random\" or \"pdfs\"", fmt::format("\"{}\"", *mode));
  }
  l.max_states = t.whole<std::uint64_t>("max_states", {1, 1e12}).value_or(l.max_states);
  l.max_depth = t.whole<std::uint32_t>("max_depth", {1, 100000}).value_or(l.max_depth);
  l.walks = t.whole<std::uint64_t>("walks", {1, 1e12}).value_or(l.walks);
  l.seed = t.whole<std::uint64_t>("seed", {0}).value_or(l.seed);
}

std::vector<std::string> read_invariant_names(TomlTable& root, std::span<const std::string> known_names) {
  std::vector<std::string> names;
  const toml::table* raw = root.raw();
  const toml::node* n = raw == nullptr ? nullptr : raw->get("invariants");
  if (n == nullptr) return names;
  std::string known;
  for (const auto& name : known_names) known += (known.empty() ? "" : ", ") + name;
  const toml::array* arr = n->as_array();
  if (arr == nullptr) {
    root.fail_at(*n, "invariants", "an array of invariant names", describe_value(*n));
    return names;
  }
  for (const auto& item : *arr) {
    const auto* s = item.as_string();
    bool valid = s != nullptr;
    if (valid) {
      valid = false;
      for (const auto& name : known_names) valid = valid || name == s->get();
    }
    if (!valid) {
      root.fail_at(item, "invariants", fmt::format("one of {}", known), describe_value(item));
      return names;
    }
    names.push_back(s->get());
  }
  return names;
}

namespace {

Result<CheckSpec> read_model_file(const toml::table& doc, TomlReader& reader, const std::string& file) {
  TomlTable root(reader, &doc, "");
  root.allow_only({"name", "mutation", "invariants", "world", "bounds", "search", "engine"});
  CheckSpec spec;
  spec.model.name = root.text("name").value_or(std::filesystem::path(file).stem().string());
  read_world(root.table("world"), spec.model);
  read_bounds(root.table("bounds"), spec.model);
  read_search_table(root.table("search"), spec.limits);
  spec.model.tunables = read_engine_table(root.table("engine"));
  if (auto mut = root.text("mutation")) {
    if (auto m = parse_mutation(*mut)) {
      spec.model.mutation = *m;
    } else {
      root.fail("mutation", fmt::format("one of {}", mutation_names()), fmt::format("\"{}\"", *mut));
    }
  }
  std::vector<std::string> known;
  for (const auto& inv : failover_invariants()) known.push_back(inv.name);
  spec.invariants = read_invariant_names(root, known);
  if (reader.failed()) return *reader.error();
  return spec;
}

// A scenario names a topology and an engine; the checker keeps its paths (at most 4), its
// replay policy and tunables, and explores the standard bound over them.
CheckSpec from_scenario(const Scenario& sc) {
  CheckSpec spec;
  spec.model = standard_bound(sc.engine.replay);
  spec.model.name = sc.name;
  spec.model.tunables = sc.engine;
  spec.model.paths = std::min<std::uint32_t>(sc.topology.paths_per_conn, 4);
  spec.model.bidirectional = sc.workload.pattern == TrafficPattern::Bidirectional;
  spec.model.link_failures = std::min<std::uint32_t>(spec.model.link_failures, spec.model.paths);
  return spec;
}

Result<CheckSpec> load(std::string_view text, const std::string& file) {
  auto doc = parse_toml(text, file, kDocs);
  if (!doc) return doc.error();
  if (doc.value().contains("topology") || doc.value().contains("workload")) {
    auto sc = load_scenario_string(text, file);
    if (!sc) return sc.error();
    return from_scenario(sc.value());
  }
  TomlReader reader(file);
  return read_model_file(doc.value(), reader, file);
}

}  // namespace

SearchMode parse_search_mode_or(std::string_view s, SearchMode fallback) {
  for (const auto& [k, name] : kModes)
    if (name == s) return k;
  return fallback;
}

std::string_view to_string(SearchMode m) {
  for (const auto& [k, name] : kModes)
    if (k == m) return name;
  return "?";
}

std::optional<std::string> model_world(std::string_view text) {
  auto doc = parse_toml(text, "model", kDocs);
  if (!doc) return std::nullopt;
  const auto* w = doc.value().get("world");
  if (w == nullptr || !w->is_string()) return std::nullopt;
  return w->as_string()->get();
}

Result<CheckSpec> load_check_spec_file(const std::string& path) {
  auto text = read_text_file(path, "model file", "check the path; the shipped models are in verify/models/");
  if (!text) return text.error();
  return load(text.value(), path);
}

Result<CheckSpec> load_check_spec_string(std::string_view text, const std::string& name_for_errors) {
  return load(text, name_for_errors);
}

}  // namespace railcheck::verify
