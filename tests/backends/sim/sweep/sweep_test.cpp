#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "backends/sim/sweep/sweep_run.hpp"
#include "models/scenario.hpp"
#include "support/test_files.hpp"

namespace fs = std::filesystem;
using namespace railcheck::sweep;

namespace {

using railcheck::test::fresh_dir;
using railcheck::test::json_lines;

const std::string kScenarioDir = std::string(RAILCHECK_SOURCE_DIR) + "/scenarios";

SweepSpec load(const std::string& text) {
  auto spec = load_sweep_string(text, "test.sweep.toml", kScenarioDir);
  INFO((spec ? "" : spec.error().message()));
  REQUIRE(spec);
  return std::move(spec).value();
}

const std::string kTwoAxes = R"(
name = "t"
scenario = "short-flap.toml"
seeds = { from = 7, count = 2 }
[[axis]]
key = "engine.replay_policy"
values = ["naive", "probe", "resync"]
[[axis]]
key = "faults.link_down[0].until_ms"
range = { from = 40, to = 60, step = 20 }
)";

// Stands in for `railcheck run`: writes a summary to the --json path ($5) and counts its calls.
std::vector<std::string> fake_runner(const fs::path& counter) {
  return {"/bin/sh", "-c",
          "echo '{\"outcome\":\"delivered\",\"lost\":0}' > \"$5\"; echo \"$3\" >> '" + counter.string() + "'", "fake"};
}

std::size_t lines(const fs::path& f) {
  std::ifstream in(f);
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

}  // namespace

TEST_CASE("a sweep expands to every combination of axis values and seeds, last axis fastest, seeds innermost") {
  const SweepSpec spec = load(kTwoAxes);
  const auto points = expand(spec);
  REQUIRE(points.size() == 3 * 2 * 2);
  std::set<std::string> ids;
  for (const auto& p : points) ids.insert(p.id);
  CHECK(ids.size() == points.size());
  CHECK(points[0].id == "engine.replay_policy=naive,faults.link_down[0].until_ms=40,seed=7");
  CHECK(points[1].id == "engine.replay_policy=naive,faults.link_down[0].until_ms=40,seed=8");
  CHECK(points[2].id == "engine.replay_policy=naive,faults.link_down[0].until_ms=60,seed=7");
  CHECK(points[11].id == "engine.replay_policy=resync,faults.link_down[0].until_ms=60,seed=8");
  for (std::size_t i = 0; i < points.size(); ++i) CHECK(points[i].index == i);
}

TEST_CASE("a log range is geometric and rounded to three significant digits") {
  const SweepSpec spec = load(R"(
name = "t"
scenario = "short-flap.toml"
[[axis]]
key = "engine.rto_ms"
log_range = { from = 1, to = 1000, points = 4 }
)");
  REQUIRE(spec.axes.size() == 1);
  std::vector<std::string> got;
  for (const auto& v : spec.axes[0].values) got.push_back(format_value(v));
  CHECK(got == std::vector<std::string>{"1", "10", "100", "1000"});
}

TEST_CASE("shards of any count cover every point exactly once") {
  const auto points = expand(load(kTwoAxes));
  for (std::uint32_t n = 1; n <= 7; ++n) {
    std::vector<int> seen(points.size(), 0);
    for (std::uint32_t k = 0; k < n; ++k)
      for (const auto& p : take_shard(points, Shard{k, n})) ++seen[p.index];
    INFO("shards: " << n);
    CHECK(std::all_of(seen.begin(), seen.end(), [](int c) { return c == 1; }));
  }
}

TEST_CASE("a shard spec must be K/N with K below N") {
  CHECK(parse_shard("1/4"));
  CHECK_FALSE(parse_shard("4/4"));
  CHECK_FALSE(parse_shard("1/0"));
  CHECK_FALSE(parse_shard("x/2"));
  CHECK_FALSE(parse_shard("2"));
}

TEST_CASE("a point's scenario carries the axis values and loads") {
  const SweepSpec spec = load(kTwoAxes);
  const auto points = expand(spec);
  auto text = point_scenario(spec, points[11]);
  REQUIRE(text);
  auto sc = railcheck::load_scenario_string(text.value(), "point");
  INFO((sc ? "" : sc.error().message()));
  REQUIRE(sc);
  CHECK(sc->engine.replay == railcheck::ReplayPolicy::Resync);
  REQUIRE(sc->faults.downs.size() == 1);
  CHECK(sc->faults.downs[0].until == railcheck::Nanos(60'000'000));
}

TEST_CASE("an axis into a missing array entry is an error that names the key") {
  SweepSpec spec = load(R"(
name = "t"
scenario = "short-flap.toml"
[[axis]]
key = "faults.link_down[3].at_ms"
values = [1.0]
)");
  auto text = point_scenario(spec, expand(spec)[0]);
  REQUIRE_FALSE(text);
  CHECK_THAT(text.error().what, Catch::Contains("faults.link_down[3].at_ms") && Catch::Contains("link_down[3]"));
}

TEST_CASE("a sweep file with an unknown key fails with file and line") {
  auto spec =
      load_sweep_string("name = \"t\"\nscenario = \"short-flap.toml\"\nsedes = [1]\n", "bad.toml", kScenarioDir);
  REQUIRE_FALSE(spec);
  CHECK_THAT(spec.error().what, Catch::StartsWith("bad.toml:3:"));
}

TEST_CASE("resume runs only the points a previous, partial sweep did not finish") {
  const SweepSpec spec = load(kTwoAxes);
  const fs::path dir = fresh_dir("sweep-test", "resume", false);
  const fs::path counter = dir.string() + ".calls";
  fs::remove(counter);
  SweepConfig cfg{dir.string(), fake_runner(counter), 2, false, Shard{0, 3}, nullptr};
  auto first = run_sweep(spec, cfg);
  REQUIRE(first);
  CHECK(first->ran == 4);
  CHECK(lines(counter) == 4);

  cfg.resume = true;
  cfg.shard = Shard{0, 1};
  auto second = run_sweep(spec, cfg);
  REQUIRE(second);
  CHECK(second->skipped == 4);
  CHECK(second->ran == 8);
  CHECK(lines(counter) == 12);
  std::multiset<std::string> ids;
  for (const auto& r : json_lines(dir / "results.jsonl")) ids.insert(r["point"].get<std::string>());
  for (const auto& p : expand(spec)) CHECK(ids.count(p.id) == 1);
  CHECK(lines(dir / "results.csv") == 1 + 12);

  auto third = run_sweep(spec, cfg);
  REQUIRE(third);
  CHECK(third->ran == 0);
  fs::remove_all(dir);
  fs::remove(counter);
}

TEST_CASE("a sweep refuses to mix into existing results without --resume") {
  const SweepSpec spec = load(kTwoAxes);
  const fs::path dir = fresh_dir("sweep-test", "noresume", false);
  const fs::path counter = dir.string() + ".calls";
  SweepConfig cfg{dir.string(), fake_runner(counter), 1, false, Shard{0, 12}, nullptr};
  REQUIRE(run_sweep(spec, cfg));
  auto again = run_sweep(spec, cfg);
  REQUIRE_FALSE(again);
  CHECK_THAT(again.error().hint, Catch::Contains("--resume"));
  fs::remove_all(dir);
  fs::remove(counter);
}

TEST_CASE("a point whose run gives no summary is an error row, and resume runs it again") {
  const SweepSpec spec = load(kTwoAxes);
  const fs::path dir = fresh_dir("sweep-test", "error", false);
  SweepConfig cfg{dir.string(), {"/bin/sh", "-c", "echo 'no summary here' >&2; exit 2", "fake"}, 2, false, Shard{0, 6},
                  nullptr};
  auto t = run_sweep(spec, cfg);
  REQUIRE(t);
  CHECK(t->errors == 2);
  const auto r = json_lines(dir / "results.jsonl");
  REQUIRE(r.size() == 2);
  CHECK(r[0]["outcome"] == "error");
  CHECK(r[0]["error"] == "no summary here");
  cfg.resume = true;
  auto again = run_sweep(spec, cfg);
  REQUIRE(again);
  CHECK(again->ran == 2);
  fs::remove_all(dir);
}

TEST_CASE("a real sweep runs railcheck run per point and records its summary") {
  const fs::path railcheck = fs::read_symlink("/proc/self/exe").parent_path() / "../cli/railcheck";
  INFO("expects the railcheck executable at " << railcheck);
  REQUIRE(fs::exists(railcheck));
  const SweepSpec spec = load(R"(
name = "t"
scenario = "short-flap.toml"
seeds = [3]
[[axis]]
key = "faults.link_down[0].until_ms"
values = [30.0, 50.0]
)");
  const fs::path dir = fresh_dir("sweep-test", "real", false);
  auto t = run_sweep(spec, SweepConfig{dir.string(), {railcheck.string(), "run"}, 2, false, Shard{}, nullptr});
  REQUIRE(t);
  CHECK(t->ran == 2);
  CHECK(t->errors == 0);
  for (const auto& r : json_lines(dir / "results.jsonl")) {
    CHECK(r["outcome"] == "delivered");
    CHECK(r["seed"] == 3);
    CHECK(r["messages_delivered"] == r["messages_expected"]);
  }
  fs::remove_all(dir);
}
