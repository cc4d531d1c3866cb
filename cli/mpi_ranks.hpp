#pragma once
// The ranks of `mpirun -np N railcheck check` and `... railcheck swarm` (cli/mpi_ranks.cpp):
// MPI_COMM_WORLD, initialised when opened and finalised when dropped, or why this build cannot
// give it (MPI is linked only where CMake found it: RAILCHECK_HAVE_MPI).
#include <memory>

#include "engine/core/result.hpp"
#include "verify/distributed_bfs.hpp"

namespace railcheck::cli {

Result<std::unique_ptr<verify::RankExchange>> open_mpi_ranks();

}  // namespace railcheck::cli
