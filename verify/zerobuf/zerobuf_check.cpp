#include "verify/zerobuf/zerobuf_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "models/toml_reader.hpp"
#include "verify/check_spec.hpp"
#include "verify/zerobuf/direct_invariants.hpp"
#include "verify/zerobuf/fast_path_spec.hpp"
#include "verify/zerobuf/flag_invariants.hpp"
#include "verify/zerobuf/ll_invariants.hpp"
#include "verify/zerobuf/sma_invariants.hpp"

namespace railcheck::verify::zerobuf {
namespace {

constexpr std::string_view kDocs = "see docs/zerobuf.md for the zero-buffer model files";

template <typename World>
std::vector<std::string> names_of(const std::vector<Invariant<World>>& all) {
  std::vector<std::string> out;
  for (const auto& inv : all) out.push_back(inv.name);
  return out;
}

std::vector<std::string> invariant_names(WorldKind k) {
  switch (k) {
    case WorldKind::Flags: return names_of(flag_invariants());
    case WorldKind::Sma: return names_of(sma_invariants());
    case WorldKind::Ll: return names_of(ll_invariants());
    case WorldKind::Direct: return names_of(direct_invariants());
  }
  return {};
}

template <typename World>
std::vector<std::string> lines_of(const std::vector<Invariant<World>>& all) {
  std::vector<std::string> out;
  for (const auto& inv : all) out.push_back(fmt::format("{:<34} {}", inv.name, inv.description));
  return out;
}

// The model-file table each world reads its model from.
std::string_view section_of(WorldKind k) {
  switch (k) {
    case WorldKind::Flags: return "flags";
    case WorldKind::Sma: return "sma";
    case WorldKind::Ll: return "ll";
    case WorldKind::Direct: return "direct";
  }
  return "?";
}

void read_flags(TomlTable t, FlagModel& m) {
  t.allow_only({"ranks", "iterations", "ops", "dead_ranks", "in_place"});
  m.ranks = t.whole<std::uint32_t>("ranks", {1, FlagWorld::kMaxRanks}).value_or(m.ranks);
  m.iterations = t.whole<std::uint32_t>("iterations", {1, 8}).value_or(m.iterations);
  m.dead_ranks = t.whole<std::uint32_t>("dead_ranks", {0, 1}).value_or(m.dead_ranks);
  m.in_place = read_flag(t, "in_place").value_or(m.in_place);
  read_op_list(t, m.ops, railcheck::zerobuf::parse_coll_kind,
               "one of \"all-gather\", \"reduce-scatter\", \"all-reduce\", \"all-to-all\", \"dispatch\", \"combine\"");
}

void read_sma(TomlTable t, SmaModel& m) {
  t.allow_only({"streams", "ops", "live_max", "capture", "borrow"});
  m.streams = t.whole<std::uint32_t>("streams", {1, 3}).value_or(m.streams);
  m.ops = t.whole<std::uint32_t>("ops", {1, 16}).value_or(m.ops);
  m.live_max = t.whole<std::uint32_t>("live_max", {1, 6}).value_or(m.live_max);
  m.capture = read_flag(t, "capture").value_or(m.capture);
  m.borrow = read_flag(t, "borrow").value_or(m.borrow);
}

nlohmann::json model_json(const ZerobufSpec& s) {
  if (s.world == WorldKind::Ll) return model_json(s.ll);
  if (s.world == WorldKind::Direct) return model_json(s.direct);
  nlohmann::json j{{"name", model_name(s)}};
  if (s.world == WorldKind::Flags) {
    std::vector<std::string> ops;
    for (const auto k : s.flags.ops) ops.emplace_back(railcheck::zerobuf::to_string(k));
    j["ranks"] = s.flags.ranks;
    j["iterations"] = s.flags.iterations;
    j["ops"] = ops;
    j["dead_ranks"] = s.flags.dead_ranks;
    j["in_place"] = s.flags.in_place;
    j["mutation"] = std::string(to_string(s.flags.mutation));
  } else {
    j["streams"] = s.sma.streams;
    j["ops"] = s.sma.ops;
    j["live_max"] = s.sma.live_max;
    j["capture"] = s.sma.capture;
    j["borrow"] = s.sma.borrow;
    j["mutation"] = std::string(to_string(s.sma.mutation));
  }
  return j;
}

template <typename World>
Result<ZerobufOutcome> run(const World& root, const std::vector<Invariant<World>>& all, const ZerobufSpec& spec,
                           const std::function<void(const SearchStats&)>& progress) {
  std::vector<std::string> unknown;
  const auto invs = select_invariants<World>(all, spec.invariants, unknown);
  if (!unknown.empty())
    return Error{fmt::format("no invariant named {} in the {} world", unknown.front(), world_name(spec.world)),
                 "railcheck check --list-invariants"};
  const auto r = explore<World>(root, invs, spec.limits, progress);
  ZerobufOutcome o{r.stats, std::nullopt, std::nullopt, {}};
  if (r.violation) {
    o.invariant = r.violation->invariant;
    o.message = r.violation->message;
    for (const auto& c : r.violation->steps) o.steps.push_back(to_string(c));
  }
  return o;
}

template <typename World, typename Parse>
Result<ZerobufReplay> replay(World w, const std::vector<Invariant<World>>& all, const ZerobufTrace& t, Parse parse) {
  ZerobufReplay out;
  std::vector<std::string> unknown;
  const auto invs = select_invariants<World>(all, t.spec.invariants, unknown);
  auto judge = [&](bool at_end) {
    for (const auto& inv : invs)
      if (auto why = inv.check(w, at_end)) {
        out.invariant = inv.name;
        out.message = *why;
        return true;
      }
    return false;
  };
  for (const auto& text : t.steps) {
    const auto c = parse(text);
    const auto options = w.choices();
    if (!c || std::find(options.begin(), options.end(), *c) == options.end())
      return Error{fmt::format("step {} \"{}\" is not possible there", out.steps_run + 1, text),
                   "the engine or the world changed since the trace was recorded"};
    out.lines.push_back(fmt::format("{:>4}. {}", out.steps_run + 1, w.describe_choice(*c)));
    w.apply(*c);
    ++out.steps_run;
    if (judge(false)) return out;
  }
  if (w.choices().empty()) judge(true);
  return out;
}

}  // namespace

std::string_view world_name(WorldKind k) {
  switch (k) {
    case WorldKind::Flags: return "zerobuf-flags";
    case WorldKind::Sma: return "zerobuf-sma";
    case WorldKind::Ll: return "zerobuf-ll";
    case WorldKind::Direct: return "zerobuf-direct";
  }
  return "?";
}

const std::string& model_name(const ZerobufSpec& s) {
  switch (s.world) {
    case WorldKind::Flags: return s.flags.name;
    case WorldKind::Sma: return s.sma.name;
    case WorldKind::Ll: return s.ll.name;
    case WorldKind::Direct: return s.direct.name;
  }
  return s.flags.name;
}

bool names_zerobuf_world(std::string_view text) {
  for (const char* key : {"world = \"zerobuf-", "world=\"zerobuf-", "\"world\": \"zerobuf-", "\"world\":\"zerobuf-"})
    if (text.find(key) != std::string_view::npos) return true;
  return false;
}

std::vector<std::string> invariant_lines(WorldKind k) {
  switch (k) {
    case WorldKind::Flags: return lines_of(flag_invariants());
    case WorldKind::Sma: return lines_of(sma_invariants());
    case WorldKind::Ll: return lines_of(ll_invariants());
    case WorldKind::Direct: return lines_of(direct_invariants());
  }
  return {};
}

std::string describe(const ZerobufSpec& s) {
  switch (s.world) {
    case WorldKind::Flags: return describe(s.flags);
    case WorldKind::Sma: return describe(s.sma);
    case WorldKind::Ll: return describe(s.ll);
    case WorldKind::Direct: return describe(s.direct);
  }
  return "?";
}

Result<ZerobufSpec> load_zerobuf_spec_string(std::string_view text, const std::string& file) {
  auto doc = parse_toml(text, file, kDocs);
  if (!doc) return doc.error();
  TomlReader reader(file);
  TomlTable root(reader, &doc.value(), "");
  root.allow_only({"name", "world", "mutation", "invariants", "flags", "sma", "ll", "direct", "search"});
  ZerobufSpec spec;
  spec.limits.max_depth = 2000;
  const std::string name = root.text("name").value_or(std::filesystem::path(file).stem().string());
  const std::string world = root.text("world").value_or("");
  if (world == "zerobuf-flags") {
    spec.world = WorldKind::Flags;
    spec.flags.name = name;
    read_flags(root.table("flags"), spec.flags);
  } else if (world == "zerobuf-sma") {
    spec.world = WorldKind::Sma;
    spec.sma.name = name;
    read_sma(root.table("sma"), spec.sma);
  } else if (world == "zerobuf-ll") {
    spec.world = WorldKind::Ll;
    spec.ll.name = name;
    read_ll(root.table("ll"), spec.ll);
  } else if (world == "zerobuf-direct") {
    spec.world = WorldKind::Direct;
    spec.direct.name = name;
    read_direct(root.table("direct"), spec.direct);
  } else {
    root.fail("world", "\"zerobuf-flags\", \"zerobuf-sma\", \"zerobuf-ll\" or \"zerobuf-direct\"",
              fmt::format("\"{}\"", world));
  }
  if (auto mut = root.text("mutation")) {
    const auto take = [&](auto parsed, auto& field, std::string_view names) {
      if (parsed)
        field = *parsed;
      else
        root.fail("mutation", fmt::format("one of {}", names), fmt::format("\"{}\"", *mut));
    };
    switch (spec.world) {
      case WorldKind::Flags: take(parse_flag_mutation(*mut), spec.flags.mutation, flag_mutation_names()); break;
      case WorldKind::Sma: take(parse_sma_mutation(*mut), spec.sma.mutation, sma_mutation_names()); break;
      case WorldKind::Ll: take(parse_ll_mutation(*mut), spec.ll.mutation, ll_mutation_names()); break;
      case WorldKind::Direct: take(parse_direct_mutation(*mut), spec.direct.mutation, direct_mutation_names()); break;
    }
  }
  read_search_table(root.table("search"), spec.limits);
  if (!reader.failed()) spec.invariants = read_invariant_names(root, invariant_names(spec.world));
  if (reader.failed()) return *reader.error();
  return spec;
}

Result<ZerobufSpec> load_zerobuf_spec_file(const std::string& path) {
  auto text = read_text_file(path, "model file", "check the path; the shipped models are in verify/models/");
  if (!text) return text.error();
  return load_zerobuf_spec_string(text.value(), path);
}

Result<ZerobufOutcome> check_zerobuf(const ZerobufSpec& spec, const std::function<void(const SearchStats&)>& progress) {
  switch (spec.world) {
    case WorldKind::Flags: return run(FlagWorld(spec.flags), flag_invariants(), spec, progress);
    case WorldKind::Sma: return run(SmaWorld(spec.sma), sma_invariants(), spec, progress);
    case WorldKind::Ll: return run(LlWorld(spec.ll), ll_invariants(), spec, progress);
    case WorldKind::Direct: return run(DirectWorld(spec.direct), direct_invariants(), spec, progress);
  }
  return Error{"unknown zero-buffer world", "railcheck check --list-invariants"};
}

std::string write_zerobuf_trace(const ZerobufSpec& spec, const ZerobufOutcome& o) {
  nlohmann::json j{{"railcheck_trace", 1},
                   {"world", std::string(world_name(spec.world))},
                   {"model", model_json(spec)},
                   {"invariant", o.invariant.value_or("")},
                   {"message", o.message.value_or("")},
                   {"invariants", spec.invariants},
                   {"steps", o.steps}};
  return j.dump(2) + "\n";
}

Result<ZerobufTrace> read_zerobuf_trace(std::string_view text, const std::string& file) {
  const auto j = nlohmann::json::parse(text, nullptr, false);
  auto bad = [&](std::string what) {
    return Error{fmt::format("{}: {}", file, what), "a trace written by railcheck check"};
  };
  if (j.is_discarded() || !j.is_object()) return bad("not a JSON object");
  if (!j.contains("world") || !j["world"].is_string() || !j.contains("model") || !j["model"].is_object() ||
      !j.contains("steps") || !j["steps"].is_array())
    return bad("needs \"world\", \"model\" and \"steps\"");
  // The model goes back through the model-file reader, so a trace is held to the same ranges.
  const auto& m = j["model"];
  std::string toml = fmt::format("world = \"{}\"\nname = {}\nmutation = {}\n", j["world"].get<std::string>(),
                                 m.contains("name") ? m["name"].dump() : "\"trace\"",
                                 m.contains("mutation") ? m["mutation"].dump() : "\"none\"");
  if (j.contains("invariants")) toml += fmt::format("invariants = {}\n", j["invariants"].dump());
  std::string section = "sma";
  for (const auto k : kZerobufWorlds)
    if (j["world"] == world_name(k)) section = section_of(k);
  toml += fmt::format("[{}]\n", section);
  for (const auto& [k, v] : m.items())
    if (k != "name" && k != "mutation") toml += fmt::format("{} = {}\n", k, v.dump());
  auto spec = load_zerobuf_spec_string(toml, file);
  if (!spec) return spec.error();
  for (const char* key : {"invariant", "message"})
    if (j.contains(key) && !j[key].is_string()) return bad(fmt::format("\"{}\" must be a string", key));
  ZerobufTrace t{spec.value(), {}, j.value("invariant", std::string()), j.value("message", std::string())};
  for (const auto& s : j["steps"]) {
    if (!s.is_string()) return bad("steps must be strings");
    t.steps.push_back(s.get<std::string>());
  }
  return t;
}

Result<ZerobufReplay> replay_zerobuf(const ZerobufTrace& t) {
  switch (t.spec.world) {
    case WorldKind::Flags:
      return replay(FlagWorld(t.spec.flags), flag_invariants(), t,
                    [](std::string_view s) { return parse_flag_choice(s); });
    case WorldKind::Sma:
      return replay(SmaWorld(t.spec.sma), sma_invariants(), t, [](std::string_view s) { return parse_sma_choice(s); });
    case WorldKind::Ll:
      return replay(LlWorld(t.spec.ll), ll_invariants(), t, [](std::string_view s) { return parse_ll_choice(s); });
    case WorldKind::Direct:
      return replay(DirectWorld(t.spec.direct), direct_invariants(), t,
                    [](std::string_view s) { return parse_direct_choice(s); });
  }
  return Error{"unknown zero-buffer world", "a trace written by railcheck check"};
}

}  // namespace railcheck::verify::zerobuf
