// `railcheck check --mode pdfs --threads N` (verify/parallel_dfs.hpp) end to end: the dfs's
// verdict and counts with --symmetry off, the mode and threads in JSON, a counterexample that
// `railcheck replay` reproduces, and --threads refused with a plain dfs.
#include <fmt/format.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/commands.hpp"
#include "tests/cli/railcheck_exe.hpp"

using namespace railcheck::cli;

namespace {

// Both directions over 2 paths, 2 messages each, 1 failure, 1 loss, 1 timer race.
const char* kBothWaysModel = R"(
[world]
paths = 2
messages = 2
bidirectional = true
[bounds]
link_failures = 1
losses = 1
timer_races = 1
)";

}  // namespace

TEST_CASE("railcheck check --mode pdfs: the dfs verdict and counts on 3 threads, a trace replay reproduces", "[cli]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("railcheck-check-pdfs-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string both = kBothWaysModel;
#ifdef RAILCHECK_SANITIZE
  // A tenth of the states per second in the sanitizer trees: the same paths without the loss.
  both.replace(both.find("losses = 1"), 10, "losses = 0");
#endif
  std::ofstream(dir / "both.toml") << both;
  nlohmann::json results[2];
  for (const char* mode : {"dfs", "pdfs --threads 3"}) {
    const bool pdfs = std::string(mode) != "dfs";
    const auto r = exe::run_railcheck(dir, fmt::format("check both.toml --policy resync --symmetry off --mode {} "
                                                       "--json out.json",
                                                       mode));
    INFO(r.out << r.err);
    CHECK(r.code == kExitOk);
    results[pdfs ? 1 : 0] = nlohmann::json::parse(exe::slurp(dir / "out.json"));
  }
  CHECK(results[1].at("mode") == "pdfs");
  CHECK(results[1].at("threads") == 3);
  for (const char* key : {"states", "distinct_states", "end_states", "exhausted"})
    CHECK(results[0].at(key) == results[1].at(key));

  const auto naive = exe::run_railcheck(dir, "check both.toml --policy naive --mode pdfs --threads 2 --trace cx.json");
  INFO(naive.out << naive.err);
  CHECK(naive.code == kExitViolation);
  CHECK(exe::run_railcheck(dir, "replay cx.json").code == kExitViolation);

  const auto dfs_threads = exe::run_railcheck(dir, "check both.toml --mode dfs --threads 2");
  CHECK(dfs_threads.code == kExitBadInput);
  CHECK_THAT(dfs_threads.err, Catch::Contains("--threads 2 needs --mode bfs or pdfs"));
  CHECK_THAT(exe::run_railcheck(dir, "check --help").out, Catch::Contains("pdfs"));
  fs::remove_all(dir);
}
