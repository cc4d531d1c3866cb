#include "backends/sim/sweep/mpi_sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "backends/sim/sweep/result_log.hpp"

#ifdef RAILCHECK_HAVE_MPI
#include <mpi.h>
#endif

namespace railcheck::sweep {

bool started_by_mpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr;
}

unsigned cores_per_rank() {
  unsigned cores = std::max(1U, std::thread::hardware_concurrency());
  if (const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE"); started_by_mpirun() && local != nullptr)
    cores = std::max(1U, cores / std::max(1U, static_cast<unsigned>(std::strtoul(local, nullptr, 10))));
  return cores;
}

#ifndef RAILCHECK_HAVE_MPI

bool mpi_built_in() { return false; }

Result<MpiSweep> run_sweep_mpi(const SweepSpec&, SweepConfig) {
  return Error{"started under mpirun, but this railcheck was built without MPI",
               "install libopenmpi-dev and rebuild, or run shards by hand with --shard K/N"};
}

#else

bool mpi_built_in() { return true; }

namespace {

namespace fs = std::filesystem;

// What one rank reports to rank 0: its tally and its rows, or its error.
nlohmann::json rank_report(const Result<SweepTally>& tally, const fs::path& dir) {
  if (!tally) return {{"error", tally.error().message()}};
  const SweepTally& t = tally.value();
  nlohmann::json rows = nlohmann::json::array();
  std::ifstream in(dir / "results.jsonl");
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) rows.push_back(nlohmann::json::parse(line, nullptr, false));
  return {{"points", t.points},         {"skipped", t.skipped}, {"ran", t.ran},
          {"violations", t.violations}, {"errors", t.errors},   {"rows", rows}};
}

std::vector<std::string> gather_to_root(const std::string& mine, int rank, int ranks) {
  int len = static_cast<int>(mine.size());
  std::vector<int> lens(ranks);
  MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> offsets(ranks, 0);
  std::string all;
  if (rank == 0) {
    for (int r = 1; r < ranks; ++r) offsets[r] = offsets[r - 1] + lens[r - 1];
    all.resize(static_cast<std::size_t>(offsets[ranks - 1] + lens[ranks - 1]));
  }
  MPI_Gatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  std::vector<std::string> out;
  if (rank == 0)
    for (int r = 0; r < ranks; ++r) out.push_back(all.substr(offsets[r], lens[r]));
  return out;
}

std::string broadcast_from_root(std::string text, int rank) {
  unsigned long long len = text.size();
  MPI_Bcast(&len, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  if (rank != 0) text.resize(len);
  MPI_Bcast(text.data(), static_cast<int>(len), MPI_CHAR, 0, MPI_COMM_WORLD);
  return text;
}

// Rank 0: check that the ranks together hold every point exactly once, then write them in
// point order. A point run again after an error row (--resume) keeps its last row.
Result<MpiSweep> merge(const SweepSpec& spec, const std::vector<std::string>& reports, const std::string& out_dir) {
  MpiSweep m;
  std::map<std::size_t, nlohmann::json> by_index;
  for (std::size_t r = 0; r < reports.size(); ++r) {
    const auto j = nlohmann::json::parse(reports[r], nullptr, false);
    if (!j.is_object()) return Error{fmt::format("rank {} sent an unreadable report", r), {}};
    if (j.contains("error")) return Error{fmt::format("rank {}: {}", r, j["error"].get<std::string>()), {}};
    m.tally.points += j["points"].get<std::size_t>();
    m.tally.skipped += j["skipped"].get<std::size_t>();
    m.tally.ran += j["ran"].get<std::size_t>();
    m.tally.violations += j["violations"].get<std::size_t>();
    m.tally.errors += j["errors"].get<std::size_t>();
    std::map<std::size_t, std::size_t> owner;
    for (const auto& row : j["rows"]) {
      if (!row.is_object() || !row.contains("index"))
        return Error{fmt::format("rank {}: a row of {}/rank-{}/results.jsonl is not a result row", r, out_dir, r), {}};
      const auto index = row["index"].get<std::size_t>();
      if (index % reports.size() != r)
        return Error{fmt::format("rank {} holds point {}, which belongs to shard {}/{}", r, index,
                                 index % reports.size(), reports.size()),
                     "resume with the same -np, or start a fresh --out"};
      by_index[index] = row;
    }
  }
  const std::size_t expected = expand(spec).size();
  if (by_index.size() != expected)
    return Error{fmt::format("the ranks hold {} of the sweep's {} points", by_index.size(), expected),
                 "run again with --resume to finish the missing ones"};
  // The merged files are derived from the rank folders: rewrite them every time.
  std::error_code ec;
  fs::remove(fs::path(out_dir) / "results.jsonl", ec);
  fs::remove(fs::path(out_dir) / "results.csv", ec);
  auto log = ResultLog::open(out_dir, false);
  if (!log) return log.error();
  for (const auto& [index, row] : by_index) log.value().append(row);
  m.merged = by_index.size();
  m.out_dir = out_dir;
  return m;
}

}  // namespace

Result<MpiSweep> run_sweep_mpi(const SweepSpec& spec, SweepConfig cfg) {
  int already = 0;
  MPI_Initialized(&already);
  if (already == 0) MPI_Init(nullptr, nullptr);
  int rank = 0;
  int ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);

  const std::string top = cfg.out_dir;
  cfg.out_dir = (fs::path(top) / fmt::format("rank-{}", rank)).string();
  cfg.shard = Shard{static_cast<std::uint32_t>(rank), static_cast<std::uint32_t>(ranks)};
  if (rank != 0) cfg.progress = nullptr;  // one progress line, rank 0's shard
  const auto tally = run_sweep(spec, cfg);
  const auto reports = gather_to_root(rank_report(tally, cfg.out_dir).dump(), rank, ranks);

  nlohmann::json verdict;
  if (rank == 0) {
    auto merged = merge(spec, reports, top);
    if (!merged) {
      verdict = {{"error", merged.error().what}, {"hint", merged.error().hint}};
    } else {
      const MpiSweep& m = merged.value();
      verdict = {{"points", m.tally.points},         {"skipped", m.tally.skipped}, {"ran", m.tally.ran},
                 {"violations", m.tally.violations}, {"errors", m.tally.errors},   {"merged", m.merged}};
    }
  }
  const auto v = nlohmann::json::parse(broadcast_from_root(verdict.dump(), rank));
  MPI_Finalize();
  if (v.contains("error")) return Error{v["error"].get<std::string>(), v["hint"].get<std::string>()};
  MpiSweep m;
  m.rank = rank;
  m.ranks = ranks;
  m.tally = SweepTally{v["points"].get<std::size_t>(), v["skipped"].get<std::size_t>(), v["ran"].get<std::size_t>(),
                       v["violations"].get<std::size_t>(), v["errors"].get<std::size_t>()};
  m.merged = v["merged"].get<std::size_t>();
  m.out_dir = top;
  return m;
}

#endif

}  // namespace railcheck::sweep
