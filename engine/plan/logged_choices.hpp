#pragma once
// One rank's TUNING lines stand for the whole communicator. NCCL 2.28.9 decides a collective's
// algorithm, protocol and channels from inputs every rank shares: the group's collectives and
// the communicator's tables (src/enqueue.cc ncclPrepareTasks -> getAlgoInfo, then
// scheduleCollTasksToPlan), and must, since each channel's blocks of all ranks form one ring or
// tree. It prints them on rank 0 only (scheduleCollTasksToPlan: "if (comm->rank == 0)"), so a
// replay that gave rank 0 the logged choice and the other ranks the model's would report a
// difference no input shows.
//
// So a collective logged on some rank gives its choice to every rank that issued the same
// operation at the same place and logged nothing. Where two ranks' own lines disagree, that is a
// real divergence and channel_agreement reports it as such (Divergence::Kind::LoggedLines).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "engine/plan/task.hpp"

namespace railcheck::plan {

// Copies logged choices (algorithm, protocol, logged channel range, logged_by) to the ranks
// without a line of their own whose tuner inputs equal the logging rank's (`same_inputs(from, to)`:
// NCCL decides alike only from equal inputs; a rank with another NCCL_PROTO decides for itself);
// returns how many collectives received one.
std::size_t share_logged_choices(
    std::vector<RankStream>& ranks, const std::function<bool(std::uint32_t from, std::uint32_t to)>& same_inputs =
                                        [](std::uint32_t, std::uint32_t) { return true; });

// Same function, count, datatype and reduction: the same collective of the communicator.
bool same_operation(const CollTask& a, const CollTask& b);

}  // namespace railcheck::plan
