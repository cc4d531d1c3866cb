#pragma once
// NCCL prints its tuning tables rounded to 0.1 ("%8.1f/%6.1f", src/graph/tuning.cc
// ncclTopoTuneModel), and costs near a protocol boundary can turn on the lost digits: on the
// recorded 2-node run a 4 KiB Tree all-reduce is LL at NCCL's Tree LL bandwidth 0.247 GB/s but
// Simple at the printed 0.2. So the printed table is taken as what it is, ncclTopoTuneModel's
// output rounded, and its inputs are recovered: the ring and tree graphs' per-channel bandwidth
// (backed out of the Ring and Tree Simple all-reduce cells), the tree pattern, NVLink or PCI
// inside a node and the CPU vendor. The first candidate whose computed table (nccl228_tune_model)
// rounds to every printed cell replaces it, with the printed zeros (algorithms and protocols NCCL
// disabled: NCCL_ALGO, NCCL_PROTO, LL128 paths) kept. Where none does, the printed table stands.
#include "engine/plan/comm_shape.hpp"

namespace railcheck::plan {

// `printed`: a table read off a log for this communicator (nranks, nodes and channels set).
CostTables exact_tables(const CommShape& shape, const CostTables& printed);

}  // namespace railcheck::plan
