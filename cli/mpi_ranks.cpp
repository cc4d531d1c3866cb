// The ranks of `mpirun -np N railcheck check ... --mode bfs` (verify/distributed_bfs.hpp) and of
// `mpirun -np N railcheck swarm` over MPI. MPI is linked only where CMake found it
// (RAILCHECK_HAVE_MPI, as for `railcheck sweep`); a build without it says so when started under
// mpirun.
#include "cli/mpi_ranks.hpp"

#include <fmt/format.h>

#include <climits>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.hpp"

#ifdef RAILCHECK_HAVE_MPI
#include <mpi.h>
#endif

namespace railcheck::cli {

#ifndef RAILCHECK_HAVE_MPI

Result<std::unique_ptr<verify::RankExchange>> open_mpi_ranks() {
  return Error{"started under mpirun, but this railcheck was built without MPI",
               "install libopenmpi-dev (scripts/install-deps.sh) and rebuild, or run without mpirun"};
}

#else

namespace {

// One MPI_COMM_WORLD: initialised when made, finalised when dropped.
class MpiRanks final : public verify::RankExchange {
 public:
  MpiRanks() {
    MPI_Init(nullptr, nullptr);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks_);
  }
  ~MpiRanks() override { MPI_Finalize(); }
  MpiRanks(const MpiRanks&) = delete;
  MpiRanks& operator=(const MpiRanks&) = delete;
  int rank() const override { return rank_; }
  int ranks() const override { return ranks_; }

  std::vector<std::vector<std::uint64_t>> all_to_all(const std::vector<std::vector<std::uint64_t>>& out) override {
    std::vector<int> send_counts(ranks_), recv_counts(ranks_), send_at(ranks_), recv_at(ranks_);
    std::vector<std::uint64_t> flat;
    for (int r = 0; r < ranks_; ++r) {
      send_counts[r] = count_of(out[r].size());
      send_at[r] = count_of(flat.size());
      flat.insert(flat.end(), out[r].begin(), out[r].end());
    }
    MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
    std::size_t total = 0;
    for (int r = 0; r < ranks_; ++r) {
      recv_at[r] = count_of(total);
      total += static_cast<std::size_t>(recv_counts[r]);
    }
    std::vector<std::uint64_t> in(total);
    MPI_Alltoallv(flat.data(), send_counts.data(), send_at.data(), MPI_UINT64_T, in.data(), recv_counts.data(),
                  recv_at.data(), MPI_UINT64_T, MPI_COMM_WORLD);
    return split(in, recv_counts, recv_at);
  }

  std::vector<std::vector<std::uint64_t>> all_gather(const std::vector<std::uint64_t>& mine) override {
    int n = count_of(mine.size());
    std::vector<int> counts(ranks_), at(ranks_);
    MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
    std::size_t total = 0;
    for (int r = 0; r < ranks_; ++r) {
      at[r] = count_of(total);
      total += static_cast<std::size_t>(counts[r]);
    }
    std::vector<std::uint64_t> all(total);
    MPI_Allgatherv(mine.data(), n, MPI_UINT64_T, all.data(), counts.data(), at.data(), MPI_UINT64_T, MPI_COMM_WORLD);
    return split(all, counts, at);
  }

 private:
  // MPI counts are ints: a level that sends 2^31 fingerprints to one rank is over what one call
  // carries; stop loudly rather than truncate.
  static int count_of(std::size_t n) {
    if (n > static_cast<std::size_t>(INT_MAX)) {
      fmt::print(stderr, "railcheck: {} values in one MPI exchange (at most {}); use more ranks\n", n, INT_MAX);
      MPI_Abort(MPI_COMM_WORLD, kExitInternal);
    }
    return static_cast<int>(n);
  }
  std::vector<std::vector<std::uint64_t>> split(const std::vector<std::uint64_t>& flat, const std::vector<int>& counts,
                                                const std::vector<int>& at) const {
    std::vector<std::vector<std::uint64_t>> by_rank(ranks_);
    for (int r = 0; r < ranks_; ++r) by_rank[r].assign(flat.begin() + at[r], flat.begin() + at[r] + counts[r]);
    return by_rank;
  }
  int rank_ = 0, ranks_ = 1;
};

}  // namespace

Result<std::unique_ptr<verify::RankExchange>> open_mpi_ranks() {
  return std::unique_ptr<verify::RankExchange>(std::make_unique<MpiRanks>());
}

#endif

}  // namespace railcheck::cli
