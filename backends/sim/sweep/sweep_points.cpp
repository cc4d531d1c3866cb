#include "backends/sim/sweep/sweep_points.hpp"

#include <fmt/format.h>

#include <charconv>
#include <sstream>

namespace railcheck::sweep {
namespace {

struct KeyStep {
  std::string name;
  std::optional<std::size_t> index;  // "link_down[0]"
};

std::optional<std::vector<KeyStep>> split_key(std::string_view key) {
  std::vector<KeyStep> steps;
  std::size_t start = 0;
  while (start <= key.size()) {
    const std::size_t dot = std::min(key.find('.', start), key.size());
    std::string_view part = key.substr(start, dot - start);
    KeyStep s;
    if (const auto open = part.find('['); open != std::string_view::npos) {
      if (part.back() != ']') return std::nullopt;
      std::size_t i = 0;
      const auto digits = part.substr(open + 1, part.size() - open - 2);
      const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), i);
      if (ec != std::errc{} || ptr != digits.data() + digits.size()) return std::nullopt;
      s.index = i;
      part = part.substr(0, open);
    }
    if (part.empty()) return std::nullopt;
    s.name = std::string(part);
    steps.push_back(std::move(s));
    start = dot + 1;
  }
  return steps;
}

// Sets `value` at `key` inside `root`; the error names the first step that does not exist.
std::optional<std::string> put(toml::table& root, std::string_view key, const toml::node& value) {
  const auto steps = split_key(key);
  if (!steps) return fmt::format("expected a dotted key like engine.rto_ms or faults.link_down[0].at_ms");
  toml::table* t = &root;
  for (std::size_t i = 0; i < steps->size(); ++i) {
    const KeyStep& s = (*steps)[i];
    const bool last = i + 1 == steps->size();
    if (last && !s.index) {
      t->insert_or_assign(s.name, value);
      return std::nullopt;
    }
    if (s.index) {
      toml::array* arr = t->get_as<toml::array>(s.name);
      if (arr == nullptr || *s.index >= arr->size()) return fmt::format("the scenario has no {}[{}]", s.name, *s.index);
      toml::node& entry = *arr->get(*s.index);
      if (last) {
        arr->replace(arr->begin() + static_cast<std::ptrdiff_t>(*s.index), value);
        return std::nullopt;
      }
      t = entry.as_table();
      if (t == nullptr) return fmt::format("{}[{}] is not a table", s.name, *s.index);
      continue;
    }
    if (!t->contains(s.name)) t->insert(s.name, toml::table{});
    t = t->get_as<toml::table>(s.name);
    if (t == nullptr) return fmt::format("{} is not a table", s.name);
  }
  return std::nullopt;
}

}  // namespace

std::vector<SweepPoint> expand(const SweepSpec& spec) {
  std::vector<SweepPoint> points;
  std::vector<std::size_t> at(spec.axes.size(), 0);  // odometer over the axes
  for (;;) {
    for (std::uint64_t seed : spec.seeds) {
      SweepPoint p;
      p.index = points.size();
      p.seed = seed;
      for (std::size_t a = 0; a < spec.axes.size(); ++a) {
        const toml::node& v = *spec.axes[a].values.get(at[a]);
        p.values.push_back(&v);
        p.params.emplace_back(spec.axes[a].key, format_value(v));
        p.id += fmt::format("{}={},", spec.axes[a].key, format_value(v));
      }
      p.id += fmt::format("seed={}", seed);
      points.push_back(std::move(p));
    }
    std::size_t a = spec.axes.size();
    while (a > 0 && ++at[a - 1] == spec.axes[a - 1].values.size()) at[--a] = 0;
    if (a == 0) break;
  }
  return points;
}

Result<Shard> parse_shard(std::string_view text) {
  Shard s;
  const auto slash = text.find('/');
  const Error bad{fmt::format("--shard {}: expected K/N with 0 <= K < N, e.g. 0/4", text),
                  "shards count from 0, like MPI ranks and Slurm array task ids"};
  if (slash == std::string_view::npos) return bad;
  const auto k = text.substr(0, slash);
  const auto n = text.substr(slash + 1);
  const auto [pk, ek] = std::from_chars(k.data(), k.data() + k.size(), s.k);
  const auto [pn, en] = std::from_chars(n.data(), n.data() + n.size(), s.n);
  if (ek != std::errc{} || en != std::errc{} || pk != k.data() + k.size() || pn != n.data() + n.size() || s.n == 0 ||
      s.k >= s.n)
    return bad;
  return s;
}

std::vector<SweepPoint> take_shard(std::vector<SweepPoint> points, Shard s) {
  std::vector<SweepPoint> mine;
  for (SweepPoint& p : points)
    if (p.index % s.n == s.k) mine.push_back(std::move(p));
  return mine;
}

Result<std::string> point_scenario(const SweepSpec& spec, const SweepPoint& p) {
  toml::table t = spec.scenario;
  for (std::size_t a = 0; a < spec.axes.size(); ++a) {
    if (auto problem = put(t, spec.axes[a].key, *p.values[a]))
      return Error{fmt::format("{}: axis {}: {}", spec.source_path, spec.axes[a].key, *problem),
                   "axis keys are dotted paths into the sweep's scenario"};
  }
  std::ostringstream out;
  out << "# sweep " << spec.name << ", point " << p.index << ": " << p.id << "\n"
      << "# base scenario: " << spec.scenario_path << "\n"
      << t << "\n";
  return out.str();
}

}  // namespace railcheck::sweep
