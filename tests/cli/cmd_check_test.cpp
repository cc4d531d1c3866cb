// railcheck check / replay: exit codes, the trace file, and the JSON result.
#include <fmt/format.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "support/test_files.hpp"
#include "tests/cli/railcheck_exe.hpp"

using namespace railcheck::cli;

namespace {

using railcheck::test::write_temp;

const char* kSmallModel = R"(
[world]
paths = 2
messages = 2
bidirectional = false
[bounds]
link_failures = 1
losses = 1
timer_races = 1
)";

}  // namespace

TEST_CASE("railcheck check: naive exits 1 and writes a trace that replay reproduces", "[cli]") {
  CheckOptions o;
  o.file = write_temp("check-test", "small.toml", kSmallModel);
  o.policy = "naive";
  o.mode = "bfs";
  o.trace_path = "/tmp/railcheck-check-test-naive.trace.json";
  std::remove(o.trace_path.c_str());
  REQUIRE(cmd_check(o) == kExitViolation);
  ReplayOptions r;
  r.trace = o.trace_path;
  CHECK(cmd_replay(r) == kExitViolation);
}

TEST_CASE("railcheck check: resync exhausts the bound, exits 0 and says so in JSON", "[cli]") {
  CheckOptions o;
  o.file = write_temp("check-test", "small2.toml", kSmallModel);
  o.policy = "resync";
  o.json_path = "/tmp/railcheck-check-test-resync.json";
  REQUIRE(cmd_check(o) == kExitOk);
  std::ifstream f(o.json_path);
  const auto j = nlohmann::json::parse(f);
  CHECK(j.at("exhausted") == true);
  CHECK(j.at("distinct_states").get<std::uint64_t>() > 1000);
  CHECK_FALSE(j.contains("violation"));
  // The figures of the final line, under the same names.
  const double secs = j.at("seconds").get<double>();
  REQUIRE(secs > 0);
  CHECK(j.at("distinct_per_second").get<double>() ==
        Approx(static_cast<double>(j.at("distinct_states").get<std::uint64_t>()) / secs));
  CHECK(j.at("states_per_second").get<double>() ==
        Approx(static_cast<double>(j.at("states").get<std::uint64_t>()) / secs));
  CHECK(j.at("cpu_seconds").get<double>() > 0);
}

TEST_CASE("railcheck check: a state limit is inconclusive (exit 3), bad input exits 2", "[cli]") {
  CheckOptions o;
  o.file = write_temp("check-test", "small3.toml", kSmallModel);
  o.max_states = 50;
  CHECK(cmd_check(o) == kExitInconclusive);
  o.max_states.reset();
  o.mode = "sideways";
  CHECK(cmd_check(o) == kExitBadInput);
  o.mode.clear();
  o.policy = "hope";
  CHECK(cmd_check(o) == kExitBadInput);
  o.policy.clear();
  o.file = write_temp("check-test", "bad.toml", "[world]\npaths = 0\n");
  CHECK(cmd_check(o) == kExitBadInput);
  ReplayOptions r;
  r.trace = write_temp("check-test", "bad.trace.json", "{\"railcheck_trace\": 1}");
  CHECK(cmd_replay(r) == kExitBadInput);
}

TEST_CASE("railcheck check --threads: a bfs on 3 threads prints the one-thread verdict, figures and trace", "[cli]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("railcheck-check-threads-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "small.toml") << kSmallModel;
  for (const char* policy : {"naive", "resync"}) {
    INFO("policy " << policy);
    nlohmann::json results[2];
    std::string traces[2];
    for (const int threads : {1, 3}) {
      const auto r = exe::run_railcheck(dir, fmt::format("check small.toml --mode bfs --policy {} --threads {} "
                                                         "--json out-{}.json --trace cx-{}.json",
                                                         policy, threads, threads, threads));
      INFO(r.out << r.err);
      CHECK(r.code == (std::string(policy) == "naive" ? kExitViolation : kExitOk));
      auto& j = results[threads == 1 ? 0 : 1];
      j = nlohmann::json::parse(exe::slurp(dir / fmt::format("out-{}.json", threads)));
      CHECK(j.at("threads") == threads);
      if (r.code == kExitViolation) traces[threads == 1 ? 0 : 1] = exe::slurp(dir / fmt::format("cx-{}.json", threads));
    }
    for (const char* key : {"states", "distinct_states", "end_states", "max_depth", "exhausted"})
      CHECK(results[0].at(key) == results[1].at(key));
    CHECK(results[0].value("violation", nlohmann::json{}) == results[1].value("violation", nlohmann::json{}));
    CHECK(traces[0] == traces[1]);
  }
  const auto help = exe::run_railcheck(dir, "check --help");
  CHECK_THAT(help.out, Catch::Contains("--threads"));
  fs::remove_all(dir);
}

TEST_CASE("railcheck check --symmetry: on by default, fewer states, the same verdict, said in JSON and the final line",
          "[cli]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("railcheck-check-symmetry-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string both = kSmallModel;
  both.replace(both.find("bidirectional = false"), 21, "bidirectional = true");
#ifdef RAILCHECK_SANITIZE
  // Both directions at this bound take a minute in the sanitizer tree (ASan+UBSan at -O1, a tenth
  // of the optimised tree's states per second): the same paths without the loss there.
  both.replace(both.find("losses = 1"), 10, "losses = 0");
#endif
  std::ofstream(dir / "both.toml") << both;
  nlohmann::json on, off;
  for (const char* flag : {"", "--symmetry off"}) {
    const auto r = exe::run_railcheck(dir, fmt::format("check both.toml --policy resync {} --json out.json", flag));
    INFO(r.out << r.err);
    CHECK(r.code == kExitOk);
    const bool is_on = std::string(flag).empty();
    CHECK_THAT(r.out, Catch::Contains(is_on ? "CPU, symmetry on\n" : "CPU, symmetry off\n"));
    (is_on ? on : off) = nlohmann::json::parse(exe::slurp(dir / "out.json"));
  }
  CHECK(on.at("symmetry") == true);
  CHECK(off.at("symmetry") == false);
  CHECK(on.at("distinct_states").get<std::uint64_t>() < off.at("distinct_states").get<std::uint64_t>());
  // A counterexample found with the reduction on is a real run: replay reproduces it.
  const auto naive = exe::run_railcheck(dir, "check both.toml --policy naive --mode bfs --symmetry on --trace cx.json");
  INFO(naive.out << naive.err);
  CHECK(naive.code == kExitViolation);
  CHECK(exe::run_railcheck(dir, "replay cx.json").code == kExitViolation);
  // A value that is not on/off, and a world without symmetries, are bad input.
  const auto bad = exe::run_railcheck(dir, "check both.toml --symmetry maybe");
  CHECK(bad.code == kExitBadInput);
  CHECK_THAT(bad.err, Catch::Contains("--symmetry maybe: expected on or off"));
  const auto plan = exe::run_railcheck(
      dir, fmt::format("check {}/verify/models/plan-lifecycle.toml --symmetry on", RAILCHECK_SOURCE_DIR));
  CHECK(plan.code == kExitBadInput);
  CHECK_THAT(plan.err, Catch::Contains("--symmetry applies to the failover world only"));
  fs::remove_all(dir);
}

TEST_CASE("mpirun -np 2 railcheck check: the one-process verdict, figures and counterexample", "[cli][mpi]") {
  namespace fs = std::filesystem;
  if (!fs::exists("/usr/bin/mpirun")) {
    WARN("skipped: /usr/bin/mpirun is missing (scripts/install-deps.sh installs OpenMPI)");
    return;
  }
  const fs::path dir = fs::temp_directory_path() / ("railcheck-check-mpi-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "small.toml") << kSmallModel;
  for (const char* policy : {"naive", "resync"}) {
    INFO("policy " << policy);
    const auto one = exe::run_railcheck(
        dir, fmt::format("check small.toml --mode bfs --policy {} --json one.json --trace one-cx.json", policy));
    const auto two = exe::run_railcheck(
        dir, fmt::format("check small.toml --mode bfs --policy {} --json two.json --trace two-cx.json", policy), "",
        exe::kMpirunTwoRanks);
    INFO("one process: " << one.out << one.err << "\nmpirun -np 2: " << two.out << two.err);
    if (two.err.find("built without MPI") != std::string::npos) {
      WARN("skipped: this railcheck was built without MPI");
      break;
    }
    CHECK(one.code == (std::string(policy) == "naive" ? kExitViolation : kExitOk));
    CHECK(two.code == one.code);
    const auto a = nlohmann::json::parse(exe::slurp(dir / "one.json"));
    const auto b = nlohmann::json::parse(exe::slurp(dir / "two.json"));
    CHECK(b.at("ranks") == 2);
    for (const char* key : {"states", "distinct_states", "end_states", "max_depth", "exhausted"})
      CHECK(a.at(key) == b.at(key));
    CHECK(a.value("violation", nlohmann::json{}) == b.value("violation", nlohmann::json{}));
    if (one.code == kExitViolation) CHECK(exe::slurp(dir / "one-cx.json") == exe::slurp(dir / "two-cx.json"));
    // Rank 0 alone speaks: one final line, not two.
    CHECK(two.out.find("explored ") == two.out.rfind("explored "));
  }
  fs::remove_all(dir);
}
