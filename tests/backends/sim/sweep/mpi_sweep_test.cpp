// `mpirun -np 2 railcheck sweep`: ranks take shards, rank 0 merges; the merge must hold every
// point exactly once and the same rows as a run without MPI.
#include "backends/sim/sweep/mpi_sweep.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "backends/sim/sweep/child_pool.hpp"
#include "support/test_files.hpp"

namespace fs = std::filesystem;
using namespace railcheck::sweep;

namespace {

using railcheck::test::fresh_dir;
using railcheck::test::read_file;

// Rows by point id, without the one field that names the folder the point ran in.
std::map<std::string, nlohmann::json> rows_by_point(const fs::path& jsonl) {
  std::map<std::string, nlohmann::json> out;
  std::ifstream in(jsonl);
  for (std::string line; std::getline(in, line);) {
    auto row = nlohmann::json::parse(line);
    row["caps"].erase("source");
    const std::string id = row["point"];
    REQUIRE(out.emplace(id, row).second);  // no point twice
  }
  return out;
}

}  // namespace

TEST_CASE("mpirun -np 2 railcheck sweep merges every rank's rows: each point once, as without MPI") {
  const fs::path mpirun = "/usr/bin/mpirun";
  if (!mpi_built_in() || !fs::exists(mpirun)) {
    WARN("skipped: this build has no MPI or " << mpirun << " is missing (scripts/install-deps.sh installs both)");
    return;
  }
  const fs::path railcheck = fs::read_symlink("/proc/self/exe").parent_path() / "../cli/railcheck";
  REQUIRE(fs::exists(railcheck));
  const fs::path dir = fresh_dir("mpi-test", "merge");
  // 3 NICs x 2 maxRecvs x 2 seeds = 12 points of the maxComms study (no SimGrid: quick).
  const fs::path sweep = dir / "small.toml";
  std::ofstream(sweep) << "name = \"mpi-small\"\nscenario = \"" << RAILCHECK_SOURCE_DIR
                       << "/sweeps/maxcomms.scenario.toml\"\ncommand = \"budget\"\nseeds = [1, 2]\n"
                          "[[axis]]\nkey = \"topology.nic\"\nvalues = [\"cx7-400g\", \"efa-100g\", \"test-10g\"]\n"
                          "[[axis]]\nkey = \"engine.max_recvs\"\nvalues = [2, 4]\n";

  // In a container: root needs the two ALLOW variables, one host may hold more ranks than
  // slots, and only loopback TCP (no shared-memory or InfiniBand transport) is assumed.
  // OpenMPI's own allocations would otherwise read as leaks under the sanitizer build.
  const std::vector<std::string> argv = {"/usr/bin/env",
                                         "OMPI_ALLOW_RUN_AS_ROOT=1",
                                         "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
                                         "OMPI_MCA_rmaps_base_oversubscribe=1",
                                         "OMPI_MCA_btl=self,tcp",
                                         "OMPI_MCA_btl_tcp_if_include=lo",
                                         "OMPI_MCA_oob_tcp_if_include=lo",
                                         "ASAN_OPTIONS=detect_leaks=0",
                                         mpirun.string(),
                                         "-np",
                                         "2",
                                         railcheck.string(),
                                         "sweep",
                                         sweep.string(),
                                         "--out",
                                         (dir / "mpi").string(),
                                         "-j",
                                         "1"};
  int code = -1;
  REQUIRE(run_children({ChildJob{argv, (dir / "mpirun.log").string()}}, 1, [&](std::size_t, int c) { code = c; }));
  INFO(read_file(dir / "mpirun.log"));
  REQUIRE(code == 0);
  CHECK(read_file(dir / "mpirun.log").find("rank 0 merged 12 rows") != std::string::npos);

  // Each rank ran its own shard...
  const auto rank0 = rows_by_point(dir / "mpi/rank-0/results.jsonl");
  const auto rank1 = rows_by_point(dir / "mpi/rank-1/results.jsonl");
  CHECK(rank0.size() == 6);
  CHECK(rank1.size() == 6);
  for (const auto& [id, row] : rank0) CHECK(row["index"].get<int>() % 2 == 0);
  for (const auto& [id, row] : rank1) CHECK(row["index"].get<int>() % 2 == 1);

  // ...and the merge holds every point once, with the rows of a plain run.
  int plain_code = -1;
  REQUIRE(run_children(
      {ChildJob{{railcheck.string(), "sweep", sweep.string(), "--out", (dir / "plain").string(), "-j", "2"},
                (dir / "plain.log").string()}},
      1, [&](std::size_t, int c) { plain_code = c; }));
  REQUIRE(plain_code == 0);
  const auto merged = rows_by_point(dir / "mpi/results.jsonl");
  const auto plain = rows_by_point(dir / "plain/results.jsonl");
  CHECK(merged.size() == 12);
  CHECK(merged == plain);
  // Rank 0 writes the merged rows in point order.
  std::ifstream in(dir / "mpi/results.jsonl");
  int expected_index = 0;
  for (std::string line; std::getline(in, line);) CHECK(nlohmann::json::parse(line)["index"] == expected_index++);
  CHECK(fs::exists(dir / "mpi/results.csv"));
  fs::remove_all(dir);
}
