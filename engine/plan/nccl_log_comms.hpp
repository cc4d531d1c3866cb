#pragma once
// Logs of jobs with several communicators (PyTorch subgroups, ncclCommSplit): which lines belong
// to which communicator, so the importer (nccl_log_import.hpp), which models one, can be given
// one at a time. A communicator is known across ranks by what its INIT lines name:
//
//   ncclCommInitRankConfig comm 0x.. rank R nranks N ... commId 0x<hash> - Init START
//   ncclCommSplit comm 0x.. rank R nranks N ... parent 0x.. splitCount S color C key K - Init START
//
// (the same commId on every rank; a split is its parent's identity, its color and split count).
// A line naming `comm 0x..` belongs to that communicator; a line that names none (ring, transport,
// TUNING, init-parameter lines) to the one its process named last; lines before any name (ENV,
// plugin, network interface) to every communicator.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/plan/nccl_log_import.hpp"

namespace railcheck::plan {

struct LogCommunicator {
  std::string id;              // "commId 0x..", "split of <id>, color C, split S"; "" when unnamed
  std::uint32_t nranks = 0;    // from its INIT lines; 0 when unnamed
  std::size_t operations = 0;  // its COLL lines, over every file
  std::vector<LogFile> files;  // each input file with only this communicator's (and shared) lines
};

// One entry per communicator the INIT lines name, most operations first; one entry holding the
// files unchanged when they name fewer than two.
std::vector<LogCommunicator> split_by_communicator(const std::vector<LogFile>& files);

// What `split` found, for a report's notes: "3 communicators: commId 0x.. (4 ranks, 12 operations), ...".
std::string describe(const std::vector<LogCommunicator>& split);

}  // namespace railcheck::plan
