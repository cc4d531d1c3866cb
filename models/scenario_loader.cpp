// TOML -> Scenario, with errors that name the file, the line, the key and what was expected.
#include <fmt/format.h>
#include <toml++/toml.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "models/scenario.hpp"

namespace railcheck {
namespace {

// Thrown inside the loader only; load_scenario_* turn it into an Error value.
struct ScenarioError {
  std::string message;
};

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const toml::node* n, const std::string& key, const std::string& what) const {
    const auto line = n != nullptr ? n->source().begin.line : 0;
    throw ScenarioError{fmt::format("{}:{}: {}: {}", file_, line, key, what)};
  }

  // Every key of `t` must be in `allowed`.
  void only(const toml::table& t, const std::string& where, std::initializer_list<std::string_view> allowed) const {
    for (const auto& [k, v] : t) {
      bool ok = false;
      for (auto a : allowed) ok = ok || a == k.str();
      if (!ok) {
        std::string list;
        for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
        fail(&v, where.empty() ? std::string(k.str()) : where + "." + std::string(k.str()),
             fmt::format("unknown key (allowed here: {})", list));
      }
    }
  }

  double number(const toml::table& t, const std::string& where, std::string_view key, double def, double lo,
                double hi) const {
    const toml::node* n = t.get(key);
    if (n == nullptr) return def;
    const std::string name = where + "." + std::string(key);
    double v = 0;
    if (auto i = n->value_exact<std::int64_t>()) {
      v = static_cast<double>(*i);
    } else if (auto d = n->value_exact<double>()) {
      v = *d;
    } else {
      fail(n, name,
           fmt::format("expected a number, got {}", toml::impl::node_type_friendly_names[static_cast<int>(n->type())]));
    }
    if (!(v >= lo && v <= hi)) fail(n, name, fmt::format("expected a value in [{}, {}], got {}", lo, hi, v));
    return v;
  }

  std::uint64_t integer(const toml::table& t, const std::string& where, std::string_view key, std::uint64_t def,
                        double lo, double hi) const {
    const double v = number(t, where, key, static_cast<double>(def), lo, hi);
    if (v != static_cast<double>(static_cast<std::uint64_t>(v)))
      fail(t.get(key), where + "." + std::string(key), fmt::format("expected a whole number, got {}", v));
    return static_cast<std::uint64_t>(v);
  }

  std::optional<std::string> string(const toml::table& t, const std::string& where, std::string_view key) const {
    const toml::node* n = t.get(key);
    if (n == nullptr) return std::nullopt;
    if (auto s = n->value_exact<std::string>()) return *s;
    fail(n, where + "." + std::string(key), "expected a string");
  }

  const toml::table* table(const toml::table& t, std::string_view key) const {
    const toml::node* n = t.get(key);
    if (n == nullptr) return nullptr;
    if (const auto* tt = n->as_table()) return tt;
    fail(n, std::string(key), "expected a table");
  }

  const std::string& file() const { return file_; }

 private:
  std::string file_;
};

// "4MiB", "64KiB", "1GiB" or a plain integer.
std::uint64_t byte_size(const Reader& r, const toml::table& t, const std::string& where, std::string_view key,
                        std::uint64_t def) {
  const toml::node* n = t.get(key);
  if (n == nullptr) return def;
  if (auto s = n->value_exact<std::string>()) {
    std::size_t pos = 0;
    unsigned long long v = 0;
    try {
      v = std::stoull(*s, &pos);
    } catch (...) {
      r.fail(n, where + "." + std::string(key),
             fmt::format("expected a size such as 4096, \"64KiB\" or \"4MiB\", got \"{}\"", *s));
    }
    const std::string unit = s->substr(pos);
    if (unit.empty() || unit == "B") return v;
    if (unit == "KiB") return v << 10;
    if (unit == "MiB") return v << 20;
    if (unit == "GiB") return v << 30;
    r.fail(n, where + "." + std::string(key), fmt::format("unknown size unit \"{}\" (use B, KiB, MiB or GiB)", unit));
  }
  return r.integer(t, where, key, def, 0, 1ULL << 40);
}

Nanos ms_key(const Reader& r, const toml::table& t, const std::string& where, std::string_view key, Nanos def) {
  const double v = r.number(t, where, key, to_millis(def), 0, 1e9);
  return Nanos{static_cast<std::int64_t>(v * 1e6)};
}

LinkRef link_ref(const Reader& r, const toml::table& t, const std::string& where, const Topology& topo) {
  LinkRef l;
  l.rank = static_cast<std::uint32_t>(r.integer(t, where, "rank", 0, 0, topo.ranks - 1.0));
  l.rail = static_cast<std::uint32_t>(r.integer(t, where, "rail", 0, 0, topo.rails - 1.0));
  return l;
}

template <typename F>
void each_fault(const Reader& r, const toml::table& faults, std::string_view kind, F f) {
  const toml::node* n = faults.get(kind);
  if (n == nullptr) return;
  const auto* arr = n->as_array();
  if (arr == nullptr)
    r.fail(n, "faults." + std::string(kind), "expected an array of tables ([[faults." + std::string(kind) + "]])");
  for (std::size_t i = 0; i < arr->size(); ++i) {
    const auto* t = (*arr)[i].as_table();
    const std::string where = fmt::format("faults.{}[{}]", kind, i);
    if (t == nullptr) r.fail(&(*arr)[i], where, "expected a table");
    f(*t, where);
  }
}

Scenario parse(const toml::table& root, const Reader& r, const std::string& default_name) {
  Scenario sc;
  r.only(root, "", {"name", "description", "seed", "time_limit_ms", "topology", "workload", "engine", "faults"});
  sc.name = r.string(root, "", "name").value_or(default_name);
  sc.description = r.string(root, "", "description").value_or("");
  sc.seed = r.integer(root, "", "seed", 1, 0, 1.8e19);
  sc.time_limit = ms_key(r, root, "", "time_limit_ms", sc.time_limit);
  if (sc.time_limit <= Nanos{0}) r.fail(root.get("time_limit_ms"), "time_limit_ms", "expected a positive duration");

  Topology& topo = sc.topology;
  topo.nic = *find_nic_preset("cx7-400g");
  if (const auto* t = r.table(root, "topology")) {
    r.only(*t, "topology", {"ranks", "rails", "paths_per_conn", "nic", "link_gbps", "link_latency_us", "mtu"});
    topo.ranks = static_cast<std::uint32_t>(r.integer(*t, "topology", "ranks", 2, 2, 1 << 20));
    topo.rails = static_cast<std::uint32_t>(r.integer(*t, "topology", "rails", 2, 1, 64));
    topo.paths_per_conn = static_cast<std::uint32_t>(r.integer(*t, "topology", "paths_per_conn", 2, 1, 64));
    if (topo.paths_per_conn > topo.rails)
      r.fail(t->get("paths_per_conn"), "topology.paths_per_conn",
             fmt::format("expected at most rails = {}, got {}", topo.rails, topo.paths_per_conn));
    if (auto name = r.string(*t, "topology", "nic")) {
      auto preset = find_nic_preset(*name);
      if (!preset) {
        std::string list;
        for (const auto& p : nic_presets()) list += (list.empty() ? "" : ", ") + p.name;
        r.fail(t->get("nic"), "topology.nic", fmt::format("unknown NIC preset \"{}\" (presets: {})", *name, list));
      }
      topo.nic = *preset;
    }
    topo.nic.link_gbps = r.number(*t, "topology", "link_gbps", topo.nic.link_gbps, 0.001, 1e5);
    topo.nic.link_latency = Nanos{static_cast<std::int64_t>(
        r.number(*t, "topology", "link_latency_us", to_seconds(topo.nic.link_latency) * 1e6, 0, 1e6) * 1e3)};
    topo.nic.mtu = static_cast<std::uint32_t>(r.integer(*t, "topology", "mtu", topo.nic.mtu, 256, 1 << 20));
  }

  Workload& w = sc.workload;
  if (const auto* t = r.table(root, "workload")) {
    r.only(*t, "workload",
           {"pattern", "message_bytes", "messages", "window", "channels", "recv_group", "start_ms", "receiver_hold_ms",
            "slow_ranks"});
    if (auto p = r.string(*t, "workload", "pattern")) {
      if (*p == "bidirectional")
        w.pattern = TrafficPattern::Bidirectional;
      else if (*p == "unidirectional")
        w.pattern = TrafficPattern::Unidirectional;
      else
        r.fail(t->get("pattern"), "workload.pattern",
               fmt::format("expected \"bidirectional\" or \"unidirectional\", got \"{}\"", *p));
    }
    w.message_bytes = byte_size(r, *t, "workload", "message_bytes", w.message_bytes);
    if (w.message_bytes > 0xFFFF'FFFFULL)
      r.fail(t->get("message_bytes"), "workload.message_bytes", "expected at most 4 GiB - 1 (one WR's byte_len)");
    w.messages = static_cast<std::uint32_t>(r.integer(*t, "workload", "messages", w.messages, 1, 1e8));
    w.window = static_cast<std::uint32_t>(r.integer(*t, "workload", "window", w.window, 1, 1e6));
    w.channels = static_cast<std::uint32_t>(r.integer(*t, "workload", "channels", w.channels, 1, 64));
    w.recv_group = static_cast<std::uint32_t>(r.integer(*t, "workload", "recv_group", w.recv_group, 1, 8));
    w.start = ms_key(r, *t, "workload", "start_ms", w.start);
    w.receiver_hold = ms_key(r, *t, "workload", "receiver_hold_ms", w.receiver_hold);
    if (const toml::node* n = t->get("slow_ranks")) {
      const auto* arr = n->as_array();
      if (arr == nullptr) r.fail(n, "workload.slow_ranks", "expected an array of rank numbers");
      for (const auto& e : *arr) {
        auto v = e.value_exact<std::int64_t>();
        if (!v || *v < 0 || *v >= topo.ranks)
          r.fail(&e, "workload.slow_ranks", fmt::format("expected rank numbers in [0, {}]", topo.ranks - 1));
        w.slow_ranks.push_back(static_cast<std::uint32_t>(*v));
      }
    }
  }

  if (const auto* t = r.table(root, "engine")) {
    for (const auto& [k, v] : *t) {
      const std::string key(k.str());
      if (key == "replay_policy") {
        auto s = v.value_exact<std::string>();
        auto p = s ? parse_replay_policy(*s) : std::nullopt;
        if (!p) r.fail(&v, "engine.replay_policy", "expected \"naive\", \"probe\" or \"resync\"");
        sc.engine.replay = *p;
        continue;
      }
      if (find_tunable(key) == nullptr) {
        r.fail(&v, "engine." + key, "unknown engine tunable (see `railcheck tunables`, or replay_policy)");
      }
      double num = 0;
      if (auto i = v.value_exact<std::int64_t>())
        num = static_cast<double>(*i);
      else if (auto d = v.value_exact<double>())
        num = *d;
      else if (auto b = v.value_exact<bool>())
        num = *b ? 1 : 0;
      else
        r.fail(&v, "engine." + key, "expected a number");
      auto set = set_tunable(sc.engine, key, num);
      if (!set) r.fail(&v, "engine." + key, set.error().message());
    }
    auto ok = validate(sc.engine);
    if (!ok) r.fail(t, "engine", ok.error().message());
  }

  if (const auto* t = r.table(root, "faults")) {
    r.only(*t, "faults", {"link_down", "flap", "jitter"});
    each_fault(r, *t, "link_down", [&](const toml::table& f, const std::string& where) {
      r.only(f, where, {"rank", "rail", "at_ms", "until_ms"});
      LinkDown d{link_ref(r, f, where, topo), ms_key(r, f, where, "at_ms", Nanos{0}), std::nullopt};
      if (f.get("until_ms") != nullptr) {
        d.until = ms_key(r, f, where, "until_ms", Nanos{0});
        if (*d.until <= d.at) r.fail(f.get("until_ms"), where + ".until_ms", "expected a time after at_ms");
      }
      sc.faults.downs.push_back(d);
    });
    each_fault(r, *t, "flap", [&](const toml::table& f, const std::string& where) {
      r.only(f, where, {"rank", "rail", "start_ms", "period_ms", "down_ms", "count"});
      LinkFlap fl{link_ref(r, f, where, topo), ms_key(r, f, where, "start_ms", Nanos{0}),
                  ms_key(r, f, where, "period_ms", ms(100)), ms_key(r, f, where, "down_ms", ms(10)),
                  static_cast<std::uint32_t>(r.integer(f, where, "count", 1, 1, 1e6))};
      if (fl.down_for <= Nanos{0} || fl.down_for >= fl.period)
        r.fail(f.get("down_ms"), where + ".down_ms", "expected 0 < down_ms < period_ms");
      sc.faults.flaps.push_back(fl);
    });
    each_fault(r, *t, "jitter", [&](const toml::table& f, const std::string& where) {
      r.only(f, where, {"rank", "rail", "at_ms", "until_ms", "extra_us", "spread_us"});
      LinkJitter j{link_ref(r, f, where, topo), ms_key(r, f, where, "at_ms", Nanos{0}),
                   ms_key(r, f, where, "until_ms", Nanos{0}),
                   Nanos{static_cast<std::int64_t>(r.number(f, where, "extra_us", 0, 0, 1e9) * 1e3)},
                   Nanos{static_cast<std::int64_t>(r.number(f, where, "spread_us", 0, 0, 1e9) * 1e3)}};
      if (j.until <= j.at) r.fail(f.get("until_ms"), where + ".until_ms", "expected a time after at_ms");
      sc.faults.jitters.push_back(j);
    });
  }
  return sc;
}

Result<Scenario> load(std::string_view text, const std::string& file, const std::string& default_name) {
  const Reader r(file);
  try {
    toml::table root = toml::parse(text, file);
    Scenario sc = parse(root, r, default_name);
    sc.source_path = file;
    return sc;
  } catch (const toml::parse_error& e) {
    return Error{fmt::format("{}:{}: TOML syntax error: {}", file, e.source().begin.line, e.description()),
                 "see docs/scenarios.md for the format"};
  } catch (const ScenarioError& e) {
    return Error{e.message, "see docs/scenarios.md for every key, its default and its range"};
  }
}

}  // namespace

Result<Scenario> load_scenario_file(const std::string& path) {
  std::ifstream f(path);
  if (!f) return Error{fmt::format("cannot open scenario file {}", path), "check the path"};
  std::stringstream ss;
  ss << f.rdbuf();
  return load(ss.str(), path, std::filesystem::path(path).stem().string());
}

Result<Scenario> load_scenario_string(std::string_view toml_text, const std::string& name_for_errors) {
  return load(toml_text, name_for_errors, name_for_errors);
}

}  // namespace railcheck
