// TOML -> Scenario. The schema lives here, one function per section; typed reads and the
// "<file>:<line>: <key>: expected ..., got ..." messages live in toml_reader.cpp. docs/scenarios.md
// documents every key read here, with its default.
#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "models/engine_table.hpp"
#include "models/scenario.hpp"
#include "models/toml_reader.hpp"

namespace railcheck {
namespace {

// Upper bounds that are not hardware limits: they keep a slip of the keyboard (an extra six
// zeros) from becoming a simulation that never ends.
constexpr double kMaxMillis = 1e9;  // about 11.6 simulated days
// One message is one WR with one SGE, and ibv_sge.length is 32 bits.
constexpr double kMaxMessageBytes = 4294967295.0;
constexpr double kMaxRanks = 1024;
constexpr double kMaxRails = 16;
constexpr double kMaxRankRails = 4096;

std::string in_quotes(std::string_view s) { return fmt::format("\"{}\"", s); }

Topology read_topology(TomlTable t) {
  t.allow_only({"ranks", "rails", "paths_per_conn", "nic", "link_gbps", "link_latency_us", "mtu", "host_gbps",
                "idle_rail_poll_ms", "transport_rto_ms"});
  Topology topo;
  topo.nic = *find_nic_preset("cx7-400g");
  // Upper bounds: the simulated platform holds ranks x rails hosts, each with its links and
  // actors; past these it runs out of memory or time long before it says anything useful.
  topo.ranks = t.whole<std::uint32_t>("ranks", {2, kMaxRanks}).value_or(topo.ranks);
  topo.rails = t.whole<std::uint32_t>("rails", {1, kMaxRails}).value_or(topo.rails);
  if (static_cast<double>(topo.ranks) * topo.rails > kMaxRankRails)
    t.fail("rails", fmt::format("at most {} ranks x rails in all", kMaxRankRails),
           fmt::format("{} ranks x {} rails", topo.ranks, topo.rails));
  // Absent, it follows rails down: a one-rail topology gets one path, not an error.
  topo.paths_per_conn =
      t.whole<std::uint32_t>("paths_per_conn", {1}).value_or(std::min(topo.paths_per_conn, topo.rails));
  if (topo.paths_per_conn > topo.rails)
    t.fail("paths_per_conn", fmt::format("at most topology.rails = {} (each path uses its own rail)", topo.rails),
           fmt::format("{}", topo.paths_per_conn));
  if (auto name = t.text("nic")) {
    if (auto preset = find_nic_preset(*name))
      topo.nic = *preset;
    else
      t.fail("nic", fmt::format("a NIC preset ({})", nic_preset_names()), in_quotes(*name));
  }
  topo.nic.link_gbps = t.number("link_gbps", {0.001}).value_or(topo.nic.link_gbps);
  topo.nic.link_latency = t.micros("link_latency_us", {0, 1e6}).value_or(topo.nic.link_latency);
  topo.nic.mtu = t.whole<std::uint32_t>("mtu", {256, 65536}).value_or(topo.nic.mtu);
  // A link whose transport and host are not an HCA's: what `railcheck validate --calibrate`
  // measures of the netns lab (NicPreset, docs/validation.md). 0 = as the presets: off.
  topo.nic.host_gbps = t.number("host_gbps", {0, 1e6}).value_or(topo.nic.host_gbps);
  topo.nic.idle_rail_poll = t.millis("idle_rail_poll_ms", {0, 1000}).value_or(topo.nic.idle_rail_poll);
  topo.nic.transport_rto = t.millis("transport_rto_ms", {0, 60000}).value_or(topo.nic.transport_rto);
  return topo;
}

Workload read_workload(TomlTable t, const Topology& topo, const HaTunables& engine) {
  t.allow_only({"pattern", "message_bytes", "messages", "window", "channels", "recv_group", "start_ms",
                "receiver_hold_ms", "slow_ranks"});
  Workload w;
  if (auto p = t.text("pattern")) {
    if (*p == "bidirectional")
      w.pattern = TrafficPattern::Bidirectional;
    else if (*p == "unidirectional")
      w.pattern = TrafficPattern::Unidirectional;
    else
      t.fail("pattern", "\"bidirectional\" or \"unidirectional\"", in_quotes(*p));
  }
  w.message_bytes = t.byte_size("message_bytes", {0, kMaxMessageBytes}).value_or(w.message_bytes);
  w.messages = t.whole<std::uint32_t>("messages", {1}).value_or(w.messages);
  w.window = t.whole<std::uint32_t>("window", {1}).value_or(w.window);
  w.channels = t.whole<std::uint32_t>("channels", {1, 64}).value_or(w.channels);
  w.recv_group = t.whole<std::uint32_t>("recv_group", {1, 8}).value_or(w.recv_group);
  // NCCL never groups more receives than the plugin's maxRecvs says it can take.
  if (w.recv_group > engine.max_recvs)
    t.fail("recv_group", fmt::format("at most engine.max_recvs = {}", engine.max_recvs),
           fmt::format("{}", w.recv_group));
  w.start = t.millis("start_ms", {0, kMaxMillis}).value_or(w.start);
  w.receiver_hold = t.millis("receiver_hold_ms", {0, kMaxMillis}).value_or(w.receiver_hold);
  for (std::uint64_t r : t.whole_array("slow_ranks", {0, topo.ranks - 1.0})) {
    const auto rank = static_cast<std::uint32_t>(r);
    if (std::find(w.slow_ranks.begin(), w.slow_ranks.end(), rank) != w.slow_ranks.end())
      t.fail("slow_ranks", "each rank at most once", fmt::format("{} twice", rank));
    w.slow_ranks.push_back(rank);
  }
  return w;
}

// rank and rail of one fault entry, both below what the topology has.
LinkRef read_link(TomlTable& f, const Topology& topo) {
  LinkRef l;
  l.rank = f.whole<std::uint32_t>("rank", {0}).value_or(0);
  l.rail = f.whole<std::uint32_t>("rail", {0}).value_or(0);
  if (l.rank >= topo.ranks)
    f.fail("rank", fmt::format("a rank below topology.ranks = {}", topo.ranks), fmt::format("{}", l.rank));
  if (l.rail >= topo.rails)
    f.fail("rail", fmt::format("a rail below topology.rails = {}", topo.rails), fmt::format("{}", l.rail));
  return l;
}

std::string ms_text(Nanos t) { return fmt::format("{} ms", to_millis(t)); }

// The link and the window [at_ms, until_ms) of a fault that holds a link for a while (jitter,
// one-way loss, incast); the window must not be empty.
template <typename LinkFault>
LinkFault read_link_window(TomlTable& f, const Topology& topo) {
  LinkFault x;
  x.link = read_link(f, topo);
  x.at = f.millis("at_ms", {0, kMaxMillis}).value_or(Nanos{0});
  x.until = f.millis("until_ms", {0, kMaxMillis}).value_or(Nanos{0});
  if (x.until <= x.at) f.fail("until_ms", fmt::format("a time after at_ms = {}", ms_text(x.at)), ms_text(x.until));
  return x;
}

FaultProfile read_faults(TomlTable t, const Topology& topo) {
  t.allow_only({"link_down", "flap", "jitter", "one_way_loss", "incast", "stall"});
  FaultProfile p;
  for (TomlTable f : t.table_array("link_down")) {
    f.allow_only({"rank", "rail", "at_ms", "until_ms"});
    f.require({"rank", "rail", "at_ms"});
    LinkDown d{read_link(f, topo), f.millis("at_ms", {0, kMaxMillis}).value_or(Nanos{0}), std::nullopt};
    d.until = f.millis("until_ms", {0, kMaxMillis});
    if (d.until && *d.until <= d.at)
      f.fail("until_ms", fmt::format("a time after at_ms = {}", ms_text(d.at)), ms_text(*d.until));
    p.downs.push_back(d);
  }
  for (TomlTable f : t.table_array("flap")) {
    f.allow_only({"rank", "rail", "start_ms", "period_ms", "down_ms", "count"});
    f.require({"rank", "rail", "start_ms", "period_ms", "down_ms", "count"});
    LinkFlap fl;
    fl.link = read_link(f, topo);
    fl.start = f.millis("start_ms", {0, kMaxMillis}).value_or(Nanos{0});
    fl.period = f.millis("period_ms", {0, kMaxMillis}).value_or(Nanos{0});
    fl.down_for = f.millis("down_ms", {0, kMaxMillis}).value_or(Nanos{0});
    fl.count = f.whole<std::uint32_t>("count", {1, 1e6}).value_or(1);
    // Down for all of the period would be a link that never comes back: that is link_down.
    if (fl.down_for <= Nanos{0} || fl.down_for >= fl.period)
      f.fail("down_ms", fmt::format("a duration above 0 and below period_ms = {}", ms_text(fl.period)),
             ms_text(fl.down_for));
    p.flaps.push_back(fl);
  }
  for (TomlTable f : t.table_array("jitter")) {
    f.allow_only({"rank", "rail", "at_ms", "until_ms", "extra_us", "spread_us"});
    f.require({"rank", "rail", "at_ms", "until_ms", "extra_us"});
    auto j = read_link_window<LinkJitter>(f, topo);
    j.extra = f.micros("extra_us", {0, 1e9}).value_or(Nanos{0});
    j.spread = f.micros("spread_us", {0, 1e9}).value_or(Nanos{0});
    p.jitters.push_back(j);
  }
  for (TomlTable f : t.table_array("one_way_loss")) {
    f.allow_only({"rank", "rail", "at_ms", "until_ms", "probability"});
    f.require({"rank", "rail", "at_ms", "until_ms"});
    auto l = read_link_window<OneWayLoss>(f, topo);
    l.probability = f.number("probability", {0, 1}).value_or(1.0);
    p.losses.push_back(l);
  }
  for (TomlTable f : t.table_array("incast")) {
    f.allow_only({"rank", "rail", "at_ms", "until_ms", "flows"});
    f.require({"rank", "rail", "at_ms", "until_ms"});
    auto i = read_link_window<Incast>(f, topo);
    i.flows = f.whole<std::uint32_t>("flows", {1, 64}).value_or(i.flows);
    p.incasts.push_back(i);
  }
  for (TomlTable f : t.table_array("stall")) {
    f.allow_only({"rank", "at_ms", "for_ms"});
    f.require({"rank", "at_ms", "for_ms"});
    ProcessStall st;
    st.rank = f.whole<std::uint32_t>("rank", {0}).value_or(0);
    if (st.rank >= topo.ranks)
      f.fail("rank", fmt::format("a rank below topology.ranks = {}", topo.ranks), fmt::format("{}", st.rank));
    st.at = f.millis("at_ms", {0, kMaxMillis}).value_or(Nanos{0});
    st.for_ = f.millis("for_ms", {0, kMaxMillis}).value_or(Nanos{0});
    if (st.for_ <= Nanos{0}) f.fail("for_ms", "a positive duration", ms_text(st.for_));
    p.stalls.push_back(st);
  }
  return p;
}

Result<Scenario> read_scenario(const toml::table& doc, TomlReader& reader, const std::string& default_name) {
  TomlTable root(reader, &doc, "");
  root.allow_only({"name", "description", "seed", "time_limit_ms", "topology", "workload", "engine", "faults"});
  Scenario sc;
  sc.name = root.text("name").value_or(default_name);
  if (sc.name.empty()) root.fail("name", "a non-empty string", "\"\"");
  sc.description = root.text("description").value_or("");
  sc.seed = root.whole<std::uint64_t>("seed", {0}).value_or(sc.seed);
  sc.time_limit = root.millis("time_limit_ms", {0, kMaxMillis}).value_or(sc.time_limit);
  if (sc.time_limit <= Nanos{0}) root.fail("time_limit_ms", "a positive number", "0");

  // Topology first: the other sections check ranks and rails against it.
  sc.topology = read_topology(root.table("topology"));
  sc.engine = read_engine_table(root.table("engine"));
  sc.workload = read_workload(root.table("workload"), sc.topology, sc.engine);
  sc.faults = read_faults(root.table("faults"), sc.topology);
  if (reader.failed()) return *reader.error();
  return sc;
}

Result<Scenario> load(std::string_view text, const std::string& file) {
  const std::string default_name = std::filesystem::path(file).stem().string();
  auto doc = parse_toml(text, file, "see docs/scenarios.md for the format");
  if (!doc) return doc.error();
  TomlReader reader(file);
  auto sc = read_scenario(doc.value(), reader, default_name);
  if (sc) sc->source_path = file;
  return sc;
}

}  // namespace

HaTunables read_engine_table(TomlTable t) {
  HaTunables e;
  std::vector<std::string_view> allowed;
  for (const TunableInfo& info : tunable_table()) allowed.push_back(info.key);
  allowed.push_back("replay_policy");
  t.allow_only(allowed);

  if (auto name = t.text("replay_policy")) {
    if (auto p = parse_replay_policy(*name))
      e.replay = *p;
    else
      t.fail("replay_policy", "\"naive\", \"probe\" or \"resync\"", fmt::format("\"{}\"", *name));
  }
  // set_tunable() owns the ranges (engine/failover/ha_tunables.cpp); this only words the message.
  for (const TunableInfo& info : tunable_table()) {
    const bool is_bool = info.unit == "bool";
    std::string expected =
        is_bool ? std::string("0, 1, true or false") : describe_bounds({info.min, info.max}, info.unit != "ratio");
    if (info.unit == "ms") expected += " (ms)";
    auto v = t.numeric(info.key, expected, is_bool);
    if (v && !set_tunable(e, info.key, *v)) t.fail(info.key, expected, fmt::format("{}", *v));
  }
  if (auto ok = validate(e); !ok) t.fail_here("tunables that fit together", ok.error().what, ok.error().hint);
  return e;
}

Result<Scenario> load_scenario_file(const std::string& path) {
  auto text = read_text_file(path, "scenario file", "check the path; the shipped scenarios are in scenarios/");
  if (!text) return text.error();
  return load(text.value(), path);
}

Result<Scenario> load_scenario_string(std::string_view toml_text, const std::string& name_for_errors) {
  return load(toml_text, name_for_errors);
}

}  // namespace railcheck
