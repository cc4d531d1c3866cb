#include "verify/counterexample.hpp"

#include "engine/core/json_integer.hpp"

#include "engine/core/excerpt.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "models/toml_reader.hpp"

namespace railcheck::verify {
namespace {

using nlohmann::json;

json model_json(const FailoverModel& m) {
  json engine = json::object();
  engine["replay_policy"] = std::string(to_string(m.tunables.replay));
  for (const auto& info : tunable_table())
    if (auto v = get_tunable(m.tunables, info.key)) engine[std::string(info.key)] = *v;
  return json{{"name", m.name},
              {"paths", m.paths},
              {"messages", m.messages},
              {"bidirectional", m.bidirectional},
              {"recv_group", m.recv_group},
              {"ordered", m.ordered},
              {"delay_recv_completions", m.delay_recv_completions},
              {"interleave_user_calls", m.interleave_user_calls},
              {"faults_during_handshake", m.faults_during_handshake},
              {"link_failures", m.link_failures},
              {"link_repairs", m.link_repairs},
              {"losses", m.losses},
              {"timer_races", m.timer_races},
              {"horizon_ns", m.horizon.count()},
              {"mutation", std::string(to_string(m.mutation))},
              {"engine", engine}};
}

Result<FailoverModel> model_from_json(const json& j) {
  FailoverModel m;
  m.name = j.value("name", m.name);
  m.paths = json_integer_at<std::uint32_t>(j, "paths");
  m.messages = json_integer_at<std::uint32_t>(j, "messages");
  m.bidirectional = j.at("bidirectional").get<bool>();
  m.recv_group = json_integer_at<std::uint32_t>(j, "recv_group");
  m.ordered = j.at("ordered").get<bool>();
  m.delay_recv_completions = j.at("delay_recv_completions").get<bool>();
  m.interleave_user_calls = j.at("interleave_user_calls").get<bool>();
  m.faults_during_handshake = j.at("faults_during_handshake").get<bool>();
  m.link_failures = json_integer_at<std::uint32_t>(j, "link_failures");
  m.link_repairs = json_integer_at<std::uint32_t>(j, "link_repairs");
  m.losses = json_integer_at<std::uint32_t>(j, "losses");
  m.timer_races = json_integer_at<std::uint32_t>(j, "timer_races");
  m.horizon = Nanos{json_integer_at<std::int64_t>(j, "horizon_ns")};
  if (m.paths < 1 || m.paths > 8 || m.messages < 1 || m.messages > 64 || m.recv_group < 1 ||
      m.messages % m.recv_group != 0)
    return Error{"model out of range (paths 1..8, messages 1..64, recv_group dividing messages)", ""};
  if (!m.ordered)
    return Error{"ordered = false: the failover engine assumes in-order delivery on each path (RC, or "
                 "FI_ORDER_SAS on libfabric)",
                 "docs/verify.md, \"What the world cannot model\""};
  const auto mutation = parse_mutation(j.at("mutation").get<std::string>());
  if (!mutation) return Error{fmt::format("unknown mutation \"{}\"", j.at("mutation").get<std::string>()),
                              fmt::format("one of {}", mutation_names())};
  m.mutation = *mutation;
  const json& engine = j.at("engine");
  for (const auto& [key, value] : engine.items()) {
    if (key == "replay_policy") {
      const auto p = parse_replay_policy(value.get<std::string>());
      if (!p) return Error{fmt::format("unknown replay policy \"{}\"", value.get<std::string>()), ""};
      m.tunables.replay = *p;
      continue;
    }
    if (auto ok = set_tunable(m.tunables, key, value.get<double>()); !ok) return ok.error();
  }
  return m;
}

}  // namespace

std::string write_trace_json(const FailoverTrace& t) {
  json steps = json::array();
  for (const auto& c : t.steps) steps.push_back(to_string(c));
  const json doc{{"railcheck_trace", 1},     {"world", "failover"},    {"model", model_json(t.model)},
                 {"invariant", t.invariant}, {"message", t.message}, {"steps", steps}};
  return doc.dump(2) + "\n";
}

Result<FailoverTrace> read_trace_json(std::string_view text, const std::string& name_for_errors) {
  const std::string hint = "a trace file is written by `railcheck check`; see docs/verify.md";
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number like 1E444
    return Error{fmt::format("{}: not JSON: {}", name_for_errors, escaped_excerpt(e.what(), 200)), hint};
  }
  try {
    const auto version = doc.find("railcheck_trace");
    if (version == doc.end() || *version != 1 || doc.value("world", "") != "failover")
      return Error{fmt::format("{}: not a railcheck failover trace (version 1)", name_for_errors), hint};
    auto model = model_from_json(doc.at("model"));
    if (!model) return Error{fmt::format("{}: model: {}", name_for_errors, model.error().what), model.error().hint};
    FailoverTrace t{model.value(), {}, doc.value("invariant", ""), doc.value("message", "")};
    std::size_t i = 0;
    for (const auto& s : doc.at("steps")) {
      const auto text_step = s.get<std::string>();
      auto c = parse_choice(text_step);
      if (!c)
        return Error{fmt::format("{}: step {}: cannot read \"{}\"", name_for_errors, i, escaped_excerpt(text_step)),
                     hint};
      t.steps.push_back(*c);
      ++i;
    }
    // Replaying nothing proves nothing: "no invariant violated" would be a false success.
    if (t.steps.empty()) return Error{fmt::format("{}: the trace has no steps", name_for_errors), hint};
    return t;
  } catch (const json::exception& e) {
    return Error{fmt::format("{}: malformed trace: {}", name_for_errors, escaped_excerpt(e.what(), 200)), hint};
  } catch (const std::out_of_range& e) {  // json_integer: a number that is not an integer of the field's type
    return Error{fmt::format("{}: malformed trace: {}", name_for_errors, escaped_excerpt(e.what(), 200)), hint};
  }
}

Result<FailoverTrace> read_trace_file(const std::string& path) {
  auto text = read_text_file(path, "trace file", "pass a file written by `railcheck check --trace`");
  if (!text) return text.error();
  return read_trace_json(text.value(), path);
}

Result<ReplayOutcome> replay_trace(const FailoverTrace& t, std::span<const Invariant<FailoverWorld>> invariants) {
  FailoverWorld w(t.model);
  w.narrate(true);
  ReplayOutcome out;
  auto judge = [&](bool at_end) {
    const auto bad = detail::check_all<FailoverWorld>(w, invariants, at_end);
    if (bad) {
      out.invariant = bad->first;
      out.message = bad->second;
    }
    return bad.has_value();
  };
  if (judge(false)) return out;
  for (std::size_t i = 0; i < t.steps.size(); ++i) {
    const auto options = w.choices();
    if (std::find(options.begin(), options.end(), t.steps[i]) == options.end()) {
      std::string possible;
      for (const auto& o : options) possible += (possible.empty() ? "" : ", ") + to_string(o);
      return Error{fmt::format("step {} \"{}\" is not possible here (possible: {})", i + 1, to_string(t.steps[i]),
                               possible.empty() ? "none" : possible),
                   "the engine or the world changed since the trace was recorded"};
    }
    w.apply(t.steps[i]);
    out.lines.push_back(fmt::format("{:>3}. {}", i + 1, w.notes().empty() ? to_string(t.steps[i]) : w.notes()[0]));
    for (std::size_t k = 1; k < w.notes().size(); ++k) out.lines.push_back("     " + w.notes()[k]);
    out.steps_run = i + 1;
    if (judge(false)) return out;
  }
  if (w.choices().empty()) judge(true);
  return out;
}

}  // namespace railcheck::verify
