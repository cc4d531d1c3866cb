// `mpirun -np 2 railcheck swarm` (cli/cmd_swarm_campaign.cpp): the ranks split the seeds so that
// each runs exactly once, which shows as the one-process run's seed count, seed list and
// coverage totals; a broken engine's finding on rank 1 is printed by rank 0 with its replay
// command; a bad option exits at once on every rank instead of leaving one waiting.
#include <fmt/format.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <regex>
#include <sstream>

#include "cli/commands.hpp"
#include "tests/cli/railcheck_exe.hpp"

namespace {

namespace fs = std::filesystem;

// The summary without what depends on the machine (wall time, seeds/s, workers): the seeds,
// findings, clean failures, largest world, simulated time, the seeds run and the coverage lines.
std::string verdict_of(const std::string& out) {
  static const std::regex kWall(R"( in [0-9.]+ s on [^:]*: [0-9.]+ seeds/s;)");
  std::istringstream in(out);
  std::string kept;
  bool summary = false;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("swarm: ") && line.find(" seeds from ") != std::string::npos) {
      summary = true;
      line = std::regex_replace(line, kWall, ";");
    }
    if (summary) kept += line + "\n";
  }
  return kept;
}

bool has_mpirun() {
  if (fs::exists("/usr/bin/mpirun")) return true;
  WARN("skipped: /usr/bin/mpirun is missing (scripts/install-deps.sh installs OpenMPI)");
  return false;
}

bool built_with_mpi(const exe::Ran& r) {
  if (r.err.find("built without MPI") == std::string::npos) return true;
  WARN("skipped: this railcheck was built without MPI");
  return false;
}

fs::path fresh_dir(const char* name) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("railcheck-swarm-{}-{}", name, ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

}  // namespace

TEST_CASE("mpirun -np 2 railcheck swarm: the one-process seeds and coverage totals", "[cli][mpi][swarm]") {
  if (!has_mpirun()) return;
  const fs::path dir = fresh_dir("split");
  const auto one = exe::run_railcheck(dir, "swarm --seeds 13 --first-seed 40 -j 2");
  const auto two = exe::run_railcheck(dir, "swarm --seeds 13 --first-seed 40 -j 1", "", exe::kMpirunTwoRanks);
  INFO("one process: " << one.out << one.err << "\nmpirun -np 2: " << two.out << two.err);
  if (!built_with_mpi(two)) return;
  CHECK(one.code == railcheck::cli::kExitOk);
  CHECK(two.code == one.code);
  CHECK_THAT(two.out, Catch::Contains("2 ranks under mpirun (rank r runs seeds 40 + r + k*2)"));
  CHECK_THAT(two.out, Catch::Contains("13 seeds from 40 in "));
  CHECK_THAT(two.out, Catch::Contains(" on 2 ranks (2 workers): "));
  CHECK_THAT(two.out, Catch::Contains("\nseeds run: 40..52\n"));
  CHECK(verdict_of(two.out) == verdict_of(one.out));
  CHECK_FALSE(verdict_of(one.out).empty());
  // Rank 0 alone speaks: one header and one summary.
  CHECK(two.out.find("swarm: first seed") == two.out.rfind("swarm: first seed"));
  CHECK(two.out.find("seeds run:") == two.out.rfind("seeds run:"));

  // With --for each rank runs its part until the time is up; the summary names the seeds that
  // ran, as many as it counts.
  const auto timed = exe::run_railcheck(dir, "swarm --for 2 --first-seed 7 -j 1", "", exe::kMpirunTwoRanks);
  INFO("mpirun -np 2 --for 2: " << timed.out << timed.err);
  CHECK(timed.code == railcheck::cli::kExitOk);
  std::smatch m;
  REQUIRE(std::regex_search(timed.out, m, std::regex(R"(swarm: ([0-9]+) seeds from 7 in )")));
  const std::uint64_t count = std::stoull(m[1]);
  CHECK(count >= 2);
  REQUIRE(std::regex_search(timed.out, m, std::regex(R"(\nseeds run: ([0-9., step]+)\n)")));
  std::uint64_t listed = 0;  // "a", "a..b" or "a..b step d", comma-separated
  std::istringstream seeds(m[1]);
  for (std::string part; std::getline(seeds, part, ',');) {
    std::smatch p;
    REQUIRE(std::regex_match(part, p, std::regex(R"( ?([0-9]+)(?:\.\.([0-9]+)(?: step ([0-9]+))?)?)")));
    const std::uint64_t a = std::stoull(p[1]), b = p[2].matched ? std::stoull(p[2]) : a;
    listed += (b - a) / (p[3].matched ? std::stoull(p[3]) : 1) + 1;
  }
  CHECK(listed == count);
  fs::remove_all(dir);
}

TEST_CASE("mpirun -np 2 railcheck swarm: rank 0 reports a broken engine caught on rank 1", "[cli][mpi][swarm]") {
  if (!has_mpirun()) return;
  const fs::path dir = fresh_dir("finding");
  // replay-drops-first is caught at seed 5 (docs/swarm.md, "Catching broken engines"), and not at
  // seed 4: from seed 4, rank 0 runs 4 and rank 1 runs 5.
  const std::string args = "swarm --seeds 2 --first-seed 4 -j 1 --mutation replay-drops-first";
  const auto one = exe::run_railcheck(dir, args);
  const auto two = exe::run_railcheck(dir, args, "", exe::kMpirunTwoRanks);
  INFO("one process: " << one.out << one.err << "\nmpirun -np 2: " << two.out << two.err);
  if (!built_with_mpi(two)) return;
  CHECK(one.code == railcheck::cli::kExitViolation);
  CHECK_THAT(one.out, Catch::Contains(": seed 5: "));
  CHECK(two.code == railcheck::cli::kExitViolation);
  CHECK_THAT(two.out, Catch::Contains("swarm: FINDING on rank 1: seed 5: "));
  CHECK_THAT(two.out, Catch::Contains("-- replay: railcheck swarm --seed 5 --mutation replay-drops-first\n"));
  CHECK_THAT(two.out, Catch::Contains("; 1 finding(s);"));
  CHECK(verdict_of(two.out) == verdict_of(one.out));
  CHECK_THAT(two.err, Catch::Contains("1 seed(s) found a violation"));
  fs::remove_all(dir);
}

TEST_CASE("mpirun -np 2 railcheck swarm: a bad option exits on every rank at once", "[cli][mpi][swarm]") {
  if (!has_mpirun()) return;
  const fs::path dir = fresh_dir("bad");
  const auto bad = exe::run_railcheck(dir, "swarm --seeds 4 --mutation no-such-mutation", "", exe::kMpirunTwoRanks);
  INFO(bad.out << bad.err);
  CHECK(bad.code == railcheck::cli::kExitBadInput);  // not 124: no rank waits for the other
  CHECK_THAT(bad.err, Catch::Contains("--mutation no-such-mutation: expected one of"));
  const auto replay = exe::run_railcheck(dir, "swarm --seed 5", "", exe::kMpirunTwoRanks);
  INFO(replay.out << replay.err);
  CHECK(replay.code == railcheck::cli::kExitBadInput);
  CHECK_THAT(replay.err, Catch::Contains("--seed works on one seed in one process: run it without mpirun"));
  fs::remove_all(dir);
}
