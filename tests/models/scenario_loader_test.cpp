#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/core/rc_timeouts.hpp"
#include "models/scenario.hpp"

using namespace railcheck;
using Catch::Contains;
using Catch::StartsWith;

namespace {

const std::string kSource = RAILCHECK_SOURCE_DIR;

std::string error_of(const std::string& toml) {
  auto r = load_scenario_string(toml, "t.toml");
  REQUIRE_FALSE(r.ok());
  return r.error().what;
}

Scenario shipped(const std::string& file) {
  auto r = load_scenario_file(kSource + "/scenarios/" + file);
  INFO((r ? std::string() : r.error().message()));
  REQUIRE(r.ok());
  return r.value();
}

std::string read_text(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// How long the stream of one connection takes at line rate, ignoring latency and stalls.
Nanos stream_time(const Scenario& sc) {
  const double bits = 8.0 * static_cast<double>(sc.workload.message_bytes) * sc.workload.messages;
  return from_seconds(bits / (sc.topology.nic.link_gbps * 1e9));
}

}  // namespace

TEST_CASE("every shipped scenario loads, is named after its file and explains itself", "[scenario]") {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(kSource + "/scenarios")) {
    if (e.path().extension() != ".toml") continue;
    INFO(e.path().string());
    auto r = load_scenario_file(e.path().string());
    INFO((r ? std::string() : r.error().message()));
    REQUIRE(r.ok());
    CHECK(r->name == e.path().stem().string());
    CHECK(r->source_path == e.path().string());
    CHECK_THAT(read_text(e.path()), StartsWith("# "));  // what it shows and what to expect
    ++n;
  }
  CHECK(n >= 6);
}

TEST_CASE("shipped scenarios put their faults where their comments say", "[scenario]") {
  const Nanos window = hardware_retry_window(HaTunables{}.qp);  // 537 ms with the defaults

  const Scenario primary = shipped("primary-dies.toml");
  REQUIRE(primary.faults.downs.size() == 1);
  const Nanos fault = primary.faults.downs[0].at;
  CHECK_FALSE(primary.faults.downs[0].until);
  CHECK(fault > Nanos{0});
  CHECK(fault < stream_time(primary));             // the fault lands mid-stream
  CHECK(primary.time_limit > fault + 2 * window);  // and the run outlives detection

  const Scenario flap = shipped("short-flap.toml");
  REQUIRE(flap.faults.downs.size() == 1);
  REQUIRE(flap.faults.downs[0].until);
  CHECK(*flap.faults.downs[0].until - flap.faults.downs[0].at < window);  // hardware retries absorb it
  CHECK(flap.faults.downs[0].at < stream_time(flap));

  for (const char* f : {"standby-dies-during-failover.toml", "standby-dies-three-paths.toml"}) {
    INFO(f);
    const Scenario s = shipped(f);
    REQUIRE(s.faults.downs.size() == 2);
    const LinkDown& primary_down = s.faults.downs[0];
    const LinkDown& standby_down = s.faults.downs[1];
    CHECK(primary_down.link.rail == 0);
    CHECK(standby_down.link.rail == 1);
    // The standby is already dead when the HCA gives up on the primary and failover starts...
    CHECK(standby_down.at < primary_down.at + window);
    // ...but so recently that heartbeats cannot have noticed it yet.
    CHECK(standby_down.at + s.engine.heartbeat_interval * s.engine.heartbeat_misses > primary_down.at + window);
  }
  CHECK(shipped("standby-dies-three-paths.toml").topology.paths_per_conn == 3);

  const Scenario rnr = shipped("slow-receiver-rnr.toml");
  CHECK(rnr.faults.empty());
  CHECK(rnr.workload.slow_ranks == std::vector<std::uint32_t>{1});
  CHECK(rnr.workload.receiver_hold > rnr.engine.initial_soft_rto());  // the RTO fires before the receiver posts
}

TEST_CASE("an empty scenario is every default", "[scenario]") {
  auto r = load_scenario_string("", "scenarios/empty.toml");
  REQUIRE(r.ok());
  const Scenario& sc = r.value();
  CHECK(sc.name == "empty");
  CHECK(sc.source_path == "scenarios/empty.toml");
  CHECK(sc.seed == 1);
  CHECK(sc.time_limit == sec(60));
  CHECK(sc.topology.ranks == 2);
  CHECK(sc.topology.rails == 2);
  CHECK(sc.topology.paths_per_conn == 2);
  CHECK(sc.topology.nic.name == "cx7-400g");
  CHECK(sc.workload.pattern == TrafficPattern::Bidirectional);
  CHECK(sc.workload.message_bytes == 1 << 20);
  CHECK(sc.workload.messages == 64);
  CHECK(sc.workload.window == 8);
  CHECK(sc.engine.replay == ReplayPolicy::Resync);
  CHECK(sc.engine.qp == QpReliability{});
  CHECK(sc.faults.empty());
}

TEST_CASE("every key overrides its default", "[scenario]") {
  auto r = load_scenario_string(R"(
name = "custom"
description = "all keys"
seed = 9007199254740993
time_limit_ms = 2500.5
[topology]
ranks = 4
rails = 3
paths_per_conn = 3
nic = "efa-200g"
link_gbps = 150
link_latency_us = 2.5
mtu = 4096
[workload]
pattern = "unidirectional"
message_bytes = "64KiB"
messages = 10
window = 2
channels = 3
recv_group = 4
start_ms = 1.5
receiver_hold_ms = 3
slow_ranks = [1, 3]
[engine]
qp_timeout = 12
rto_ms = 2000
rto_backoff = 2.5
enable_backup = false
heartbeat_ms = 50
replay_policy = "probe"
[[faults.link_down]]
rank = 3
rail = 2
at_ms = 20
until_ms = 60.25
[[faults.flap]]
rank = 1
rail = 2
start_ms = 5
period_ms = 10
down_ms = 2
count = 3
[[faults.jitter]]
rank = 0
rail = 1
at_ms = 1
until_ms = 2
extra_us = 20
spread_us = 0.5
)",
                                "ok.toml");
  INFO((r ? std::string() : r.error().message()));
  REQUIRE(r.ok());
  const Scenario& sc = r.value();
  CHECK(sc.name == "custom");
  CHECK(sc.description == "all keys");
  CHECK(sc.seed == 9007199254740993ULL);  // exact beyond 2^53
  CHECK(sc.time_limit == us(2'500'500));
  CHECK(sc.topology.ranks == 4);
  CHECK(sc.topology.paths_per_conn == 3);
  CHECK(sc.topology.nic.name == "efa-200g");
  CHECK(sc.topology.nic.link_gbps == 150);
  CHECK(sc.topology.nic.link_latency == ns(2500));
  CHECK(sc.topology.nic.mtu == 4096);
  CHECK_FALSE(sc.topology.nic.ordered);  // the rest of the preset stays
  CHECK(sc.workload.pattern == TrafficPattern::Unidirectional);
  CHECK(sc.workload.message_bytes == 64 * 1024);
  CHECK(sc.workload.messages == 10);
  CHECK(sc.workload.window == 2);
  CHECK(sc.workload.channels == 3);
  CHECK(sc.workload.recv_group == 4);
  CHECK(sc.workload.start == us(1500));
  CHECK(sc.workload.receiver_hold == ms(3));
  CHECK(sc.workload.slow_ranks == std::vector<std::uint32_t>{1, 3});
  CHECK(sc.engine.qp.timeout == 12);
  CHECK(sc.engine.soft_rto == ms(2000));
  CHECK(sc.engine.rto_backoff == 2.5);
  CHECK_FALSE(sc.engine.enable_backup);
  CHECK(sc.engine.heartbeat_interval == ms(50));
  CHECK(sc.engine.replay == ReplayPolicy::Probe);
  REQUIRE(sc.faults.downs.size() == 1);
  CHECK(sc.faults.downs[0].link == LinkRef{3, 2});
  CHECK(sc.faults.downs[0].until == us(60'250));
  REQUIRE(sc.faults.flaps.size() == 1);
  CHECK(sc.faults.flaps[0].count == 3);
  CHECK(sc.faults.flaps[0].down_for == ms(2));
  REQUIRE(sc.faults.jitters.size() == 1);
  CHECK(sc.faults.jitters[0].extra == us(20));
  CHECK(sc.faults.jitters[0].spread == ns(500));
}

TEST_CASE("paths_per_conn follows a single rail down when it is not given", "[scenario]") {
  auto r = load_scenario_string("[topology]\nrails = 1\n", "t.toml");
  REQUIRE(r.ok());
  CHECK(r->topology.paths_per_conn == 1);
}

TEST_CASE("message sizes take bytes or binary units", "[scenario]") {
  const auto bytes = [](const std::string& v) {
    auto r = load_scenario_string("[workload]\nmessage_bytes = " + v + "\n", "t.toml");
    INFO((r ? std::string() : r.error().message()));
    REQUIRE(r.ok());
    return r->workload.message_bytes;
  };
  CHECK(bytes("0") == 0);
  CHECK(bytes("4096") == 4096);
  CHECK(bytes("\"512B\"") == 512);
  CHECK(bytes("\"64KiB\"") == 64 << 10);
  CHECK(bytes("\"4 MiB\"") == 4 << 20);
  CHECK(bytes("\"1GiB\"") == 1 << 30);
  CHECK_THAT(error_of("[workload]\nmessage_bytes = \"4MB\"\n"),
             Contains("t.toml:2: workload.message_bytes: expected an integer in [0, 4294967295] (or a string such "
                      "as \"64KiB\", \"4MiB\", \"1GiB\"), got \"4MB\""));
  CHECK_THAT(error_of("[workload]\nmessage_bytes = \"4GiB\"\n"), Contains("got \"4GiB\""));  // one SGE: 32 bits
  CHECK_THAT(error_of("[workload]\nmessage_bytes = \"-1\"\n"), Contains("got \"-1\""));
  CHECK_THAT(error_of("[workload]\nmessage_bytes = -1\n"), Contains("got -1"));
}

TEST_CASE("a whole float stands for an integer, a fractional one does not", "[scenario]") {
  auto r = load_scenario_string("[workload]\nmessages = 8.0\n[[faults.link_down]]\nrank = 0\nrail = 0\nat_ms = 20\n",
                                "t.toml");
  REQUIRE(r.ok());
  CHECK(r->workload.messages == 8);
  CHECK(r->faults.downs[0].at == ms(20));  // and an integer stands for a float
  CHECK(error_of("[workload]\nmessages = 2.5\n") ==
        "t.toml:2: workload.messages: expected a positive integer, got 2.5");
}

TEST_CASE("unknown keys are rejected at every level with the allowed keys and the nearest one", "[scenario]") {
  auto r = load_scenario_string("[topology]\nranks = 2\nrials = 2\n", "t.toml");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().what ==
        "t.toml:3: topology.rials: expected one of ranks, rails, paths_per_conn, nic, link_gbps, link_latency_us, "
        "mtu, host_gbps, idle_rail_poll_ms, transport_rto_ms, got an unknown key");
  CHECK(r.error().hint == "did you mean \"rails\"?");

  CHECK_THAT(error_of("nmae = \"x\"\n"), StartsWith("t.toml:1: nmae: expected one of name, description, seed"));
  CHECK_THAT(error_of("[network]\nx = 1\n"), StartsWith("t.toml:1: network: expected one of name,"));
  CHECK_THAT(error_of("\n[workload]\nmesages = 3\n"),
             StartsWith("t.toml:3: workload.mesages: expected one of pattern,"));
  CHECK_THAT(error_of("[engine]\nrto_msec = 3\n"),
             StartsWith("t.toml:2: engine.rto_msec: expected one of qp_timeout,"));
  CHECK_THAT(error_of("[engine]\nrto_msec = 3\n"), Contains("replay_policy, got an unknown key"));
  CHECK_THAT(error_of("[faults.outage]\nrank = 0\n"), StartsWith("t.toml:1: faults.outage: expected one of link_down"));
  CHECK_THAT(error_of("[[faults.flap]]\nrank = 0\nrail = 0\nstart_ms = 1\nperiod_ms = 10\ndown_ms = 1\ncount = 1\n"
                      "cycles = 3\n"),
             StartsWith("t.toml:8: faults.flap[0].cycles: expected one of rank, rail, start_ms"));
}

TEST_CASE("a value of the wrong type names the key, the line and what was expected", "[scenario]") {
  CHECK(error_of("[workload]\nmessages = \"many\"\n") ==
        "t.toml:2: workload.messages: expected a positive integer, got \"many\"");
  CHECK(error_of("seed = true\n") == "t.toml:1: seed: expected a non-negative integer, got true");
  CHECK(error_of("name = 3\n") == "t.toml:1: name: expected a string, got 3");
  CHECK(error_of("[topology]\nlink_gbps = \"fast\"\n") ==
        "t.toml:2: topology.link_gbps: expected a number >= 0.001, got \"fast\"");
  CHECK(error_of("[workload]\nslow_ranks = 1\n") ==
        "t.toml:2: workload.slow_ranks: expected an array of integers, got 1");
  CHECK(error_of("topology = 3\n") == "t.toml:1: topology: expected a table ([topology]), got 3");
  CHECK(error_of("[faults.link_down]\nrank = 0\n") ==
        "t.toml:1: faults.link_down: expected an array of tables ([[faults.link_down]]), got a table");
  CHECK(error_of("[engine]\nheartbeat_ms = \"100\"\n") ==
        "t.toml:2: engine.heartbeat_ms: expected an integer in [1, 600000] (ms), got \"100\"");
}

TEST_CASE("out-of-range and impossible values are rejected", "[scenario]") {
  CHECK(error_of("[topology]\nranks = 1\n") == "t.toml:2: topology.ranks: expected an integer in [2, 1024], got 1");
  CHECK(error_of("[topology]\nrails = 0\n") == "t.toml:2: topology.rails: expected an integer in [1, 16], got 0");
  CHECK(error_of("[topology]\nrails = 2\npaths_per_conn = 3\n") ==
        "t.toml:3: topology.paths_per_conn: expected at most topology.rails = 2 (each path uses its own rail), got 3");
  CHECK(error_of("[topology]\nranks = 5000000000\n") ==
        "t.toml:2: topology.ranks: expected an integer in [2, 1024], got 5000000000");
  CHECK(error_of("[topology]\nranks = 1024\nrails = 8\n") ==
        "t.toml:3: topology.rails: expected at most 4096 ranks x rails in all, got 1024 ranks x 8 rails");
  // A finite number is meant: inf passed "a number >= 0.001" and SimGrid aborted on it.
  CHECK(error_of("[topology]\nlink_gbps = inf\n") ==
        "t.toml:2: topology.link_gbps: expected a number >= 0.001, got inf");
  CHECK(error_of("[topology]\nlink_gbps = nan\n") ==
        "t.toml:2: topology.link_gbps: expected a number >= 0.001, got nan");
  CHECK(error_of("[workload]\nstart_ms = 1e300\n").find("workload.start_ms: expected a number in [0,") !=
        std::string::npos);
  CHECK(error_of("[workload]\nwindow = 0\n") == "t.toml:2: workload.window: expected a positive integer, got 0");
  CHECK(error_of("[workload]\nrecv_group = 9\n") ==
        "t.toml:2: workload.recv_group: expected an integer in [1, 8], got 9");
  CHECK(error_of("[engine]\nmax_recvs = 2\n[workload]\nrecv_group = 4\n") ==
        "t.toml:4: workload.recv_group: expected at most engine.max_recvs = 2, got 4");
  CHECK(error_of("[workload]\nslow_ranks = [0, 2]\n") ==
        "t.toml:2: workload.slow_ranks[1]: expected an integer in [0, 1], got 2");
  CHECK(error_of("[workload]\nslow_ranks = [1, 1]\n") ==
        "t.toml:2: workload.slow_ranks: expected each rank at most once, got 1 twice");
  CHECK(error_of("[workload]\nstart_ms = -1\n") ==
        "t.toml:2: workload.start_ms: expected a number in [0, 1000000000], got -1");
  CHECK(error_of("time_limit_ms = 0\n") == "t.toml:1: time_limit_ms: expected a positive number, got 0");
  CHECK(error_of("time_limit_ms = nan\n") == "t.toml:1: time_limit_ms: expected a number in [0, 1000000000], got nan");
}

TEST_CASE("faults must name a link the topology has and a time span that makes sense", "[scenario]") {
  CHECK(error_of("[[faults.link_down]]\nrank = 0\nrail = 5\nat_ms = 1\n") ==
        "t.toml:3: faults.link_down[0].rail: expected a rail below topology.rails = 2, got 5");
  CHECK(error_of("[[faults.link_down]]\nrank = 2\nrail = 0\nat_ms = 1\n") ==
        "t.toml:2: faults.link_down[0].rank: expected a rank below topology.ranks = 2, got 2");
  CHECK(error_of("[[faults.link_down]]\nrank = 0\nrail = 0\nat_ms = 10\nuntil_ms = 5\n") ==
        "t.toml:5: faults.link_down[0].until_ms: expected a time after at_ms = 10 ms, got 5 ms");
  CHECK(error_of("[[faults.link_down]]\nrank = 0\nrail = 0\n") ==
        "t.toml:1: faults.link_down[0].at_ms: expected a value (this key is required), got nothing");
  const std::string flap = "[[faults.flap]]\nrank = 0\nrail = 1\nstart_ms = 0\nperiod_ms = 10\n";
  CHECK(error_of(flap + "down_ms = 10\ncount = 2\n") ==
        "t.toml:6: faults.flap[0].down_ms: expected a duration above 0 and below period_ms = 10 ms, got 10 ms");
  CHECK(error_of(flap + "down_ms = 0\ncount = 2\n") ==
        "t.toml:6: faults.flap[0].down_ms: expected a duration above 0 and below period_ms = 10 ms, got 0 ms");
  CHECK(error_of(flap + "down_ms = 2\ncount = 0\n") ==
        "t.toml:7: faults.flap[0].count: expected an integer in [1, 1000000], got 0");
  CHECK(error_of(flap + "down_ms = 2\n") ==
        "t.toml:1: faults.flap[0].count: expected a value (this key is required), got nothing");
  CHECK(error_of("[[faults.jitter]]\nrank = 0\nrail = 0\nat_ms = 5\nuntil_ms = 5\nextra_us = 1\n") ==
        "t.toml:5: faults.jitter[0].until_ms: expected a time after at_ms = 5 ms, got 5 ms");
  // The index says which entry: the second one here.
  CHECK_THAT(error_of("[[faults.link_down]]\nrank = 0\nrail = 0\nat_ms = 1\n[[faults.link_down]]\nrank = 0\nrail = 9\n"
                      "at_ms = 1\n"),
             StartsWith("t.toml:7: faults.link_down[1].rail:"));
}

TEST_CASE("a bad NIC preset lists the presets", "[scenario]") {
  CHECK(error_of("[topology]\nnic = \"mlx99\"\n") ==
        "t.toml:2: topology.nic: expected a NIC preset (cx7-400g, efa-100g, efa-200g, test-10g), got \"mlx99\"");
}

TEST_CASE("engine keys go through the tunable table's ranges, then validate()", "[scenario]") {
  CHECK(error_of("[engine]\nreplay_policy = \"yolo\"\n") ==
        "t.toml:2: engine.replay_policy: expected \"naive\", \"probe\" or \"resync\", got \"yolo\"");
  CHECK(error_of("[engine]\nqp_timeout = 40\n") ==
        "t.toml:2: engine.qp_timeout: expected an integer in [1, 31], got 40");
  CHECK(error_of("[engine]\nqp_retry_cnt = 2.5\n") ==
        "t.toml:2: engine.qp_retry_cnt: expected an integer in [0, 7], got 2.5");
  CHECK(error_of("[engine]\nrto_backoff = 0.5\n") ==
        "t.toml:2: engine.rto_backoff: expected a number in [1, 10], got 0.5");
  CHECK(error_of("[engine]\nenable_backup = \"no\"\n") ==
        "t.toml:2: engine.enable_backup: expected 0, 1, true or false, got \"no\"");
  CHECK(error_of("[engine]\nenable_backup = 2\n") ==
        "t.toml:2: engine.enable_backup: expected 0, 1, true or false, got 2");
  // Each key is in range, but together they are unusable: reported at the [engine] header.
  CHECK_THAT(error_of("seed = 1\n[engine]\nrto_ms = 2000\nrto_max_ms = 1000\n"),
             StartsWith("t.toml:2: engine: expected tunables that fit together, got rto_max_ms 1.000 s is below the "
                        "soft RTO 2.000 s"));
}

TEST_CASE("a TOML syntax error gives toml++'s position and description", "[scenario]") {
  auto r = load_scenario_string("seed = 1\n[topology\n", "t.toml");
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error().what, StartsWith("t.toml:2: TOML syntax error at column "));
  CHECK_THAT(error_of("seed = 1\nseed = 2\n"), StartsWith("t.toml:2: TOML syntax error"));  // redefinition
}

TEST_CASE("a missing or unreadable scenario file is a clear error naming the path", "[scenario]") {
  auto missing = load_scenario_file("/nonexistent/x.toml");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().what == "cannot open scenario file /nonexistent/x.toml: no such file");
  auto dir = load_scenario_file(kSource + "/scenarios");
  REQUIRE_FALSE(dir.ok());
  CHECK_THAT(dir.error().what, Contains("it is a directory"));
}

TEST_CASE("errors in a file name that file", "[scenario]") {
  const auto path = std::filesystem::temp_directory_path() / "railcheck-models-test-bad.toml";
  std::ofstream(path) << "# comment\n[workload]\nmessages = -3\n";
  auto r = load_scenario_file(path.string());
  std::filesystem::remove(path);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().what == path.string() + ":3: workload.messages: expected a positive integer, got -3");
  CHECK_FALSE(r.error().hint.empty());
}

TEST_CASE("docs/scenarios.md lists every engine key with the table's default and range", "[scenario][docs]") {
  const std::string docs = read_text(kSource + "/docs/scenarios.md");
  const auto number = [](double v) { return v == std::floor(v) ? fmt::format("{:.0f}", v) : fmt::format("{}", v); };
  const HaTunables defaults{};
  for (const TunableInfo& info : tunable_table()) {
    INFO(info.key);
    const std::string row =
        fmt::format("| `{}` | {} | {} .. {} | {} | `{}` |", info.key, number(*get_tunable(defaults, info.key)),
                    number(info.min), number(info.max), info.unit, info.env);
    CHECK_THAT(docs, Contains(row));
    // The whole row, meaning included, is the one `railcheck tunables --markdown` prints.
    CHECK_THAT(docs, Contains(tunable_doc_row(info) + "\n"));
  }
  CHECK_THAT(docs, Contains("| `replay_policy` | resync |"));
}

TEST_CASE("docs/scenarios.md lists every shipped scenario", "[scenario][docs]") {
  const std::string docs = read_text(kSource + "/docs/scenarios.md");
  for (const auto& e : std::filesystem::directory_iterator(kSource + "/scenarios")) {
    if (e.path().extension() != ".toml") continue;
    CHECK_THAT(docs, Contains("`" + e.path().filename().string() + "`"));
  }
}

TEST_CASE("one-way loss incast and stall faults load with their ranges checked", "[scenario][liveness]") {
  auto r = load_scenario_string(R"(
[[faults.one_way_loss]]
rank = 0
rail = 1
at_ms = 5.0
until_ms = 9.0
probability = 0.25
[[faults.incast]]
rank = 1
rail = 0
at_ms = 1.0
until_ms = 2.0
[[faults.stall]]
rank = 1
at_ms = 3.0
for_ms = 200.0
)",
                                "t.toml");
  REQUIRE(r.ok());
  const FaultProfile& f = r->faults;
  REQUIRE(f.losses.size() == 1);
  CHECK(f.losses[0].probability == 0.25);
  CHECK(one_way_loss(f, LinkRef{0, 1}, ms(6)) == 0.25);
  CHECK(one_way_loss(f, LinkRef{0, 1}, ms(9)) == 0);
  REQUIRE(f.incasts.size() == 1);
  CHECK(f.incasts[0].flows == 8);
  CHECK(stalled_until(f, 1, ms(100)) == ms(203));
  CHECK_FALSE(stalled_until(f, 0, ms(100)));
  // None of them is an outage: a failover they cause is a false one.
  CHECK_FALSE(first_fault_time(f));
  CHECK(first_benign_fault_time(f) == ms(1));

  auto bad = load_scenario_string(
      "[[faults.one_way_loss]]\nrank = 0\nrail = 0\nat_ms = 1.0\nuntil_ms = 2.0\n"
      "probability = 1.5\n",
      "t.toml");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.error().message(), Contains("probability"));
  auto stall = load_scenario_string("[[faults.stall]]\nrank = 5\nat_ms = 1.0\nfor_ms = 2.0\n", "t.toml");
  REQUIRE_FALSE(stall.ok());
  CHECK_THAT(stall.error().message(), Contains("rank"));
}
