#include "backends/sim/sweep/sweep_spec.hpp"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>

#include "models/toml_reader.hpp"

namespace railcheck::sweep {
namespace {

constexpr std::string_view kDocs = "see docs/sweeps.md";
constexpr std::size_t kMaxAxisValues = 100000;  // a typo such as step = 0.0001 fails instead of hanging

// Values of `range = { from, to, step }`: whole numbers stay integers, so integer scenario keys
// accept them.
void expand_range(TomlTable& r, toml::array& out) {
  r.allow_only({"from", "to", "step"});
  r.require({"from", "to", "step"});
  const auto from = r.numeric("from", "a number", false);
  const auto to = r.numeric("to", "a number", false);
  const auto step = r.number("step", {1e-12});
  if (!from || !to || !step) return;
  if (*to < *from) return r.fail("to", fmt::format("a number >= from ({})", *from), fmt::format("{}", *to));
  if ((*to - *from) / *step >= kMaxAxisValues) return r.fail("step", "fewer than 100000 values", "too small a step");
  // Integers only where every value fits one exactly (a double past 2^53 is not a whole count).
  const bool whole = *from == std::floor(*from) && *step == std::floor(*step) && std::abs(*from) < 0x1p53 &&
                     std::abs(*to) < 0x1p53;
  const auto n = static_cast<std::size_t>(std::floor((*to - *from) / *step + 1e-9)) + 1;
  for (std::size_t i = 0; i < n; ++i) {
    const double v = *from + static_cast<double>(i) * *step;
    if (whole) {
      out.push_back(static_cast<std::int64_t>(v));
    } else {
      out.push_back(v);
    }
  }
}

// Values of `log_range = { from, to, points }`: geometric, rounded to 3 significant digits so
// ids and plot labels stay readable (1, 10, 100, 1000 rather than 99.99999).
void expand_log_range(TomlTable& r, toml::array& out) {
  r.allow_only({"from", "to", "points"});
  r.require({"from", "to", "points"});
  const auto from = r.number("from", {1e-12});
  const auto to = r.number("to", {1e-12});
  const auto points = r.whole<std::uint32_t>("points", {2, kMaxAxisValues});
  if (!from || !to || !points) return;
  if (*to <= *from) return r.fail("to", fmt::format("a number > from ({})", *from), fmt::format("{}", *to));
  const double ratio = std::pow(*to / *from, 1.0 / (*points - 1));
  for (std::uint32_t i = 0; i < *points; ++i) {
    const double v = *from * std::pow(ratio, i);
    const double scale = std::pow(10.0, 2 - std::floor(std::log10(v)));
    const double rounded = std::round(v * scale) / scale;
    if (rounded == std::floor(rounded) && std::abs(rounded) < 0x1p53) {
      out.push_back(static_cast<std::int64_t>(rounded));
    } else {
      out.push_back(rounded);
    }
  }
}

Axis read_axis(TomlTable& t) {
  t.allow_only({"key", "values", "range", "log_range"});
  t.require({"key"});
  Axis a{t.text("key").value_or(""), {}};
  const toml::table& raw = *t.raw();
  const int forms = int(raw.contains("values")) + int(raw.contains("range")) + int(raw.contains("log_range"));
  if (forms != 1) {
    t.fail_here("exactly one of values, range, log_range", fmt::format("{} of them", forms));
    return a;
  }
  if (const toml::node* v = raw.get("values")) {
    const toml::array* arr = v->as_array();
    if (arr == nullptr || arr->empty()) {
      t.fail_at(*v, "values", "a non-empty array", describe_value(*v));
      return a;
    }
    for (const toml::node& e : *arr) {
      if (!e.is_number() && !e.is_string() && !e.is_boolean()) {
        t.fail_at(e, "values", "numbers, strings or booleans", describe_value(e));
        return a;
      }
    }
    a.values = *arr;
  } else if (raw.contains("range")) {
    TomlTable r = t.table("range");
    expand_range(r, a.values);
  } else {
    TomlTable r = t.table("log_range");
    expand_log_range(r, a.values);
  }
  return a;
}

std::vector<std::uint64_t> read_seeds(TomlTable& top) {
  const toml::node* n = top.raw()->get("seeds");
  if (n == nullptr) return {1};
  if (n->is_array()) return top.whole_array("seeds", {0, 1.8e19});
  TomlTable s = top.table("seeds");
  s.allow_only({"from", "count"});
  s.require({"from", "count"});
  const auto from = s.whole<std::uint64_t>("from", {0, 1e18});
  const auto count = s.whole<std::uint32_t>("count", {1, kMaxAxisValues});
  std::vector<std::uint64_t> seeds;
  if (from && count)
    for (std::uint32_t i = 0; i < *count; ++i) seeds.push_back(*from + i);
  return seeds;
}

}  // namespace

std::string format_value(const toml::node& v) {
  if (const auto* s = v.as_string()) return s->get();
  if (const auto* i = v.as_integer()) return fmt::format("{}", i->get());
  if (const auto* d = v.as_floating_point()) return fmt::format("{}", d->get());
  if (const auto* b = v.as_boolean()) return b->get() ? "true" : "false";
  return describe_value(v);
}

Result<SweepSpec> load_sweep_string(std::string_view text, const std::string& name_for_errors,
                                    const std::string& base_dir) {
  auto doc = parse_toml(text, name_for_errors, kDocs);
  if (!doc) return doc.error();
  TomlReader reader(name_for_errors);
  TomlTable top(reader, &doc.value(), "");
  top.allow_only({"name", "scenario", "command", "seeds", "axis"});
  top.require({"name", "scenario"});
  SweepSpec spec;
  spec.source_path = name_for_errors;
  spec.name = top.text("name").value_or("");
  const std::string scenario = top.text("scenario").value_or("");
  spec.command = top.text("command").value_or(spec.command);
  if (spec.command != "run" && spec.command != "budget")
    top.fail("command", "run or budget", fmt::format("\"{}\"", spec.command));
  spec.seeds = read_seeds(top);
  for (TomlTable& t : top.table_array("axis")) spec.axes.push_back(read_axis(t));
  if (reader.failed()) return *reader.error();
  for (std::size_t i = 0; i < spec.axes.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (spec.axes[i].key == spec.axes[j].key)
        return Error{fmt::format("{}: axis {} repeats key {}", name_for_errors, i + 1, spec.axes[i].key),
                     "give each parameter one axis"};
  if (spec.seeds.empty()) return Error{fmt::format("{}: seeds: expected at least one seed", name_for_errors), {}};

  const std::filesystem::path sp(scenario);
  spec.scenario_path = (sp.is_absolute() ? sp : std::filesystem::path(base_dir) / sp).lexically_normal().string();
  auto scenario_text =
      read_text_file(spec.scenario_path, "scenario file", "the sweep's scenario key is relative to the sweep file");
  if (!scenario_text) return scenario_text.error();
  auto base = parse_toml(scenario_text.value(), spec.scenario_path, "see docs/scenarios.md");
  if (!base) return base.error();
  spec.scenario = std::move(base).value();
  return spec;
}

Result<SweepSpec> load_sweep_file(const std::string& path) {
  auto text = read_text_file(path, "sweep file", kDocs);
  if (!text) return text.error();
  return load_sweep_string(text.value(), path, std::filesystem::path(path).parent_path().string());
}

}  // namespace railcheck::sweep
