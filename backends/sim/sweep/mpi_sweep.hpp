#pragma once
// A sweep under mpirun (`mpirun -np N railcheck sweep FILE`): rank K of N runs shard K/N into
// <out>/rank-K/, then rank 0 gathers every rank's rows and writes them, in point order, to
// <out>/results.jsonl and results.csv. MPI is touched only when mpirun started the process, so
// plain runs never load it; a build without MPI (no MPI_CXX_FOUND) says so and exits 2.
#include <string>

#include "backends/sim/sweep/sweep_run.hpp"

namespace railcheck::sweep {

// OpenMPI's mpirun sets OMPI_COMM_WORLD_SIZE; PMIx launchers (srun --mpi=pmix) set PMIX_RANK.
bool started_by_mpirun();
// Cores each rank may use: the node's cores shared by the ranks mpirun put on it
// (OMPI_COMM_WORLD_LOCAL_SIZE); every core outside mpirun.
unsigned cores_per_rank();
// Whether this build links MPI (MPI_CXX_FOUND at configure time).
bool mpi_built_in();

struct MpiSweep {
  int rank = 0;
  int ranks = 1;
  SweepTally tally;        // summed over the ranks
  std::size_t merged = 0;  // rows in the merged results.jsonl
  std::string out_dir;     // where the merged files are
};

// Every rank returns the same value (rank 0 decides and broadcasts it), so all exit alike and
// none waits on a rank that failed. `cfg.shard` must be the default; cfg.out_dir is the top
// folder. Initializes and finalizes MPI.
Result<MpiSweep> run_sweep_mpi(const SweepSpec& spec, SweepConfig cfg);

}  // namespace railcheck::sweep
