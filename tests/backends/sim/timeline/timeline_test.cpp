#include "backends/sim/timeline.hpp"

#include <catch2/catch.hpp>
#include <set>

using nlohmann::json;

namespace {

struct Timeline {
  railcheck::Scenario sc;
  json trace;
};

Timeline run(const std::string& scenario, std::uint64_t seed) {
  auto sc = railcheck::load_scenario_file(std::string(RAILCHECK_SOURCE_DIR) + "/scenarios/" + scenario);
  REQUIRE(sc);
  const auto out = railcheck::sim::run_scenario(sc.value(), seed);
  // Round-trip through text: what a viewer gets must parse as JSON.
  return {sc.value(), json::parse(railcheck::sim::timeline_json(sc.value(), out).dump())};
}

std::multiset<std::string> names(const json& trace, std::string_view ph) {
  std::multiset<std::string> out;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == ph) out.insert(e["name"].get<std::string>());
  return out;
}

}  // namespace

TEST_CASE("the timeline of a failover run holds the outage, the detection, the failover span and the replay") {
  const std::uint64_t seed = 1;
  INFO("scenario primary-dies.toml, seed " << seed);
  const Timeline t = run("primary-dies.toml", seed);
  REQUIRE(t.trace["traceEvents"].is_array());
  const auto spans = names(t.trace, "X");
  const auto instants = names(t.trace, "i");
  CHECK(spans.count("link down") == t.sc.faults.downs.size());
  CHECK(spans.count("failover") >= 1);
  CHECK(instants.count("failover-started") == spans.count("failover"));
  CHECK(instants.count("switched") >= 1);
  CHECK(instants.count("replayed") >= 1);
  for (const auto& e : t.trace["traceEvents"]) {
    REQUIRE(e.contains("pid"));
    if (e["ph"] == "M") continue;
    CHECK(e["ts"].get<double>() >= 0);
    if (e["ph"] == "X") CHECK(e["dur"].get<double>() >= 0);
  }
}

TEST_CASE("the timeline names one process per rank and one track per connection end and path") {
  const Timeline t = run("short-flap.toml", 1);
  std::set<int> rank_pids;
  std::set<std::pair<int, int>> named_tracks;
  for (const auto& e : t.trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name" && e["pid"] != 0) rank_pids.insert(e["pid"].get<int>());
    if (e["ph"] == "M" && e["name"] == "thread_name") named_tracks.emplace(e["pid"].get<int>(), e["tid"].get<int>());
  }
  CHECK(rank_pids.size() == t.sc.topology.ranks);
  for (const auto& e : t.trace["traceEvents"])
    if (e["ph"] != "M") CHECK(named_tracks.contains({e["pid"].get<int>(), e["tid"].get<int>()}));
}
