// railcheck validate (cli/cmd_validate.cpp, backends/validate): a scenario the lab cannot make is
// exit 77 with the reason, bad input exit 2; and where this machine can build the netns lab (root,
// namespaces), each scenario family the lab can make runs on both drivers: the same outcome, every
// message delivered exactly once on both, the same failovers and no false one, the detection within
// the tolerance, each figure written side by side in the JSON the issue names.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "tests/cli/railcheck_exe.hpp"

namespace fs = std::filesystem;

namespace {

fs::path fresh(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("railcheck-validate-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string scenario(const std::string& name) { return std::string(RAILCHECK_SOURCE_DIR) + "/scenarios/" + name; }

}  // namespace

TEST_CASE("validate: a fault the lab cannot make is exit 77 with the reason, bad input is exit 2", "[cli][validate]") {
  const fs::path dir = fresh("skip");
  const auto incast = exe::run_railcheck(dir, "validate " + scenario("incast-congestion.toml"));
  CHECK(incast.code == 77);
  CHECK(incast.err.find("cannot run in the lab") != std::string::npos);
  CHECK(incast.err.find("incast") != std::string::npos);
  // One rail: no standby to fail over to, nothing the lab's failover can show.
  CHECK(exe::run_railcheck(dir, "validate " + scenario("swarm-2776-spike-latency-drop.toml")).code == 77);
  CHECK(exe::run_railcheck(dir, "validate no-such-file.toml").code != 0);
  // A link fault over shm: shared memory never crosses the rails, so it cannot show one.
  const auto shm = exe::run_railcheck(dir, "validate " + scenario("primary-dies.toml") + " --provider shm");
  CHECK(shm.code == 77);
  CHECK(shm.err.find("over shm") != std::string::npos);
  CHECK(exe::run_railcheck(dir, "validate " + scenario("primary-dies.toml") + " --lab-gbps -1").code == 2);
  const auto tiny = exe::run_railcheck(dir, "validate " + scenario("primary-dies.toml") + " --lab-gbps 0.0004");
  CHECK(tiny.code == 2);
  CHECK(tiny.err.find("at least 0.001") != std::string::npos);
  std::ofstream(dir / "bad.toml") << "name = \"bad\"\n[topology]\nranks = -1\n";
  CHECK(exe::run_railcheck(dir, "validate bad.toml").code == 2);
}

// Each scenario family the lab can make, on both drivers (issue 41): the outcome and every count
// (failovers, false failovers, lost, duplicated) the same; for an outage, the detection and the
// first replayed delivery within the tolerance (10 % or 2 ms) on three runs. The lab's sides run
// SCHED_FIFO, which keeps these on a loaded 2-core machine. Goodput is reported, not asserted
// here: on a shared 2-core runner the lab stream's rate moves by up to 40 % within a second
// (calibrations taken just before and after one run differ that much), so its agreement is
// measured on a quiet machine and written down in docs/validation.md. Under a sanitizer the lab's
// processes run several times slower: the counts are asserted there, not the times.
TEST_CASE("validate: every lab-made scenario family on SimGrid and in the netns lab: same outcome and counts",
          "[cli][validate][netns]") {
  struct Family {
    const char* file;
    double failovers;
    bool outage;
    const char* outcome = "delivered";  // both drivers'
  };
  const Family family = GENERATE(Family{"primary-dies.toml", 1, true}, Family{"link-flap.toml", 1, true},
                                 Family{"one-way-loss.toml", 1, true}, Family{"short-flap.toml", 0, true},
                                 Family{"peer-stall.toml", 0, false}, Family{"delay-spike.toml", 0, false},
                                 Family{"lossy-primary.toml", 0, false},
                                 // Both rails die: the engine ends the connection cleanly on both
                                 // drivers (two failovers begun, the second finding no standby).
                                 Family{"both-paths-die.toml", 2, true, "connection-failed"},
                                 // Three rails: the standby dies before the liveness verdict, so the
                                 // first switch lands on a dead path and a second failover moves
                                 // the stream to the third (a lab of three veth pairs).
                                 Family{"standby-dies-liveness.toml", 2, true});
  const std::string name = fs::path(family.file).stem();
  const fs::path dir = fresh(name);
#ifdef RAILCHECK_SANITIZE
  // The times are not asserted here (below), and every count is asserted on each run's pair: one
  // run per family checks the same paths, at a third of the sanitizer tree's longest test (237 s
  // of CI's 2-core time, issue 44).
  constexpr std::size_t kRuns = 1;
#else
  constexpr std::size_t kRuns = 3;
#endif
  const auto ran = exe::run_railcheck(
      dir, "validate " + scenario(family.file) + " --runs " + std::to_string(kRuns) + " --json out.json");
  if (ran.code == 77) {
    WARN("no netns lab here: " << ran.err);
    return;
  }
  INFO(name << "\n" << ran.out << ran.err);
  REQUIRE((ran.code == 0 || ran.code == 1));  // 1: a figure outside the tolerance (docs/validation.md)
  const auto j = nlohmann::json::parse(exe::slurp(dir / "out.json"));
  CHECK(j["scenario"] == name);
  CHECK(j["outcome"]["sim"] == family.outcome);
  CHECK(j["outcome"]["hardware"] == family.outcome);
  const bool delivered = std::string(family.outcome) == "delivered";
#ifdef RAILCHECK_SANITIZE
  constexpr bool kFigures = false;
#else
  constexpr bool kFigures = true;
#endif
  bool saw_detection = false;
  for (const auto& row : j["rows"]) {
    const std::string metric = row["metric"];
    INFO(metric);
    if (metric == "failovers") CHECK(row["sim"] == family.failovers);
    CHECK((metric != "lost" || delivered));  // an ended stream's rest is not "lost": it was refused
    if (metric == "failovers" || metric == "false_failovers" || metric == "lost" || metric == "duplicated" ||
        metric == "delivered_after_fault") {
      REQUIRE(row["hardware"].is_number());
      CHECK(row["agree"] == true);
    }
    if (metric == "detection_ms" && family.failovers > 0) {
      saw_detection = true;
      REQUIRE(row["hardware"].is_number());
      CHECK(row["hardware"].get<double>() > 0);
      if (kFigures) CHECK(row["agree"] == true);
    }
    if (kFigures && metric == "error_reported_ms") {
      REQUIRE(!delivered);
      REQUIRE(row["hardware"].is_number());
      CHECK(row["agree"] == true);
    }
    if (kFigures && metric == "first_replayed_delivery_ms" && family.failovers > 0 && delivered) {
      REQUIRE(row["sim"].is_number());
      REQUIRE(row["hardware"].is_number());
      CHECK(row["agree"] == true);
    }
  }
  CHECK(saw_detection == (family.outage && family.failovers > 0));
  // N runs take N + 1 calibrations: the one after run i is the one before run i + 1, so each
  // run's "before" figures are its predecessor's "after" figures.
  {
    const std::regex run_line(R"(run (\d+): ([0-9.]+) \| ([0-9.]+) Gb/s per stream[^,;]*, ([0-9.]+) \| ([0-9.]+) us)");
    std::vector<std::smatch> seen;
    for (auto it = std::sregex_iterator(ran.out.begin(), ran.out.end(), run_line); it != std::sregex_iterator(); ++it)
      seen.push_back(*it);
    CHECK(seen.size() == kRuns);
    for (std::size_t k = 1; k < seen.size(); ++k) {
      INFO(seen[k].str());
      CHECK(seen[k][2] == seen[k - 1][3]);
      CHECK(seen[k][4] == seen[k - 1][5]);
    }
  }
  CHECK(ran.out.find("replaced by the lab link") != std::string::npos);
  CHECK(ran.out.find("each rail shaped to 1 Gb/s each way") != std::string::npos);  // the default
  CHECK(ran.out.find("ofi_rxm posts 32 receive buffers per connection") != std::string::npos);  // the plugin's
}
