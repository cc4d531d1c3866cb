// Step traces (step_trace.hpp).
#include "verify/step_trace.hpp"

#include <nlohmann/json.hpp>

#include "engine/core/excerpt.hpp"

namespace railcheck::verify {

using nlohmann::json;

namespace {

// Compared as JSON, not read as an int: 1e22 read as an int is undefined behaviour.
bool is_version_1(const json& doc) {
  if (!doc.is_object()) return false;
  const auto v = doc.find("railcheck_trace");
  return v != doc.end() && *v == 1;
}

}  // namespace

std::string write_step_trace(const StepTrace& t) {
  const json doc{{"railcheck_trace", 1},     {"world", t.world},     {"model_toml", t.model_toml},
                 {"invariant", t.invariant}, {"message", t.message}, {"steps", t.steps}};
  return doc.dump(2) + "\n";
}

std::optional<std::string> trace_world(std::string_view text) {
  try {
    const json doc = json::parse(text);
    if (!is_version_1(doc)) return std::nullopt;
    const auto w = doc.find("world");
    if (w == doc.end() || !w->is_string()) return std::nullopt;
    return w->get<std::string>();
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

Result<StepTrace> read_step_trace(std::string_view text, const std::string& name_for_errors) {
  const std::string hint = "a trace file is written by `railcheck check`; see docs/verify.md";
  try {
    const json doc = json::parse(text);
    if (!is_version_1(doc))
      return Error{fmt::format("{}: not a railcheck trace (version 1)", name_for_errors), hint};
    StepTrace t{doc.at("world").get<std::string>(),
                doc.at("model_toml").get<std::string>(),
                doc.value("invariant", ""),
                doc.value("message", ""),
                {}};
    for (const auto& s : doc.at("steps")) t.steps.push_back(s.get<std::string>());
    // Replaying nothing proves nothing: "no invariant violated" would be a false success.
    if (t.steps.empty()) return Error{fmt::format("{}: the trace has no steps", name_for_errors), hint};
    return t;
  } catch (const json::exception& e) {
    return Error{fmt::format("{}: malformed trace: {}", name_for_errors, escaped_excerpt(e.what(), 200)), hint};
  }
}

}  // namespace railcheck::verify
