// The maxComms study end to end: a sweep whose points run `railcheck budget`, and its heatmap.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "backends/sim/sweep/child_pool.hpp"
#include "backends/sim/sweep/report_script.hpp"
#include "backends/sim/sweep/sweep_run.hpp"
#include "support/test_files.hpp"

namespace fs = std::filesystem;
using namespace railcheck::sweep;

namespace {

using railcheck::test::fresh_dir;
using railcheck::test::json_lines;

int run(const std::vector<std::string>& argv, const fs::path& log) {
  int code = -1;
  REQUIRE(run_children({ChildJob{argv, log.string()}}, 1, [&](std::size_t, int c) { code = c; }));
  return code;
}

}  // namespace

TEST_CASE("a sweep file's command must be run or budget") {
  auto spec = load_sweep_string("name = \"t\"\nscenario = \"x.toml\"\ncommand = \"walk\"\nseeds = [1]\n", "t.toml",
                                std::string(RAILCHECK_SOURCE_DIR) + "/sweeps");
  REQUIRE_FALSE(spec);
  CHECK(spec.error().what.find("command") != std::string::npos);
}

TEST_CASE("the shipped maxComms sweep runs railcheck budget per point, and the heatmap draws its rows") {
  const fs::path railcheck = fs::read_symlink("/proc/self/exe").parent_path() / "../cli/railcheck";
  INFO("expects the railcheck executable at " << railcheck);
  REQUIRE(fs::exists(railcheck));
  auto spec = load_sweep_file(std::string(RAILCHECK_SOURCE_DIR) + "/sweeps/maxcomms.toml");
  REQUIRE(spec);
  CHECK(spec->command == "budget");
  // A small slice: the EFA preset's 8-channel column.
  spec.value().axes[0].values = toml::array{"efa-100g"};
  spec.value().axes[3].values = toml::array{8};
  const fs::path dir = fresh_dir("maxcomms-test", "sweep");
  auto t =
      run_sweep(spec.value(), SweepConfig{dir.string(), {railcheck.string(), "budget"}, 2, false, Shard{}, nullptr});
  REQUIRE(t);
  CHECK(t->ran == 9);
  CHECK(t->errors == 0);
  CHECK(t->violations == 0);
  const auto rs = json_lines(dir / "results.jsonl");
  REQUIRE(rs.size() == 9);
  for (const auto& r : rs) {
    INFO(r.dump());
    CHECK(r["opened"]["connections"] == r["resource_comms"]);
    CHECK(r["usage"]["channels"] == 8);
  }
  REQUIRE(holds_budget_rows((dir / "results.jsonl").string()));
  const fs::path png = dir / "maxcomms.png";
  CHECK(run(maxcomms_heatmap_command((dir / "results.jsonl").string(), png.string()), dir / "heatmap.log") == 0);
  CHECK(fs::file_size(png) > 1000);
  fs::remove_all(dir);
}

TEST_CASE("the heatmap script names the file and line of a malformed row and exits 2") {
  const fs::path dir = fresh_dir("maxcomms-test", "bad");
  const fs::path jsonl = dir / "results.jsonl";
  std::ofstream(jsonl) << R"({"params":{"topology.nic":"x"}})"
                       << "\n";
  CHECK(run(maxcomms_heatmap_command(jsonl.string(), (dir / "m.png").string()), dir / "log") == 2);
  std::ifstream log(dir / "log");
  const std::string text{std::istreambuf_iterator<char>(log), {}};
  CHECK(text.find("results.jsonl:1:") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "m.png"));
  fs::remove_all(dir);
}
