#pragma once
// The 2.28 model held against what real NCCL did (railcheck align, issue 14): every rank's user
// calls and launch boundaries are read off its profiler trace (groundtruth.hpp), the
// communicator off its INIT lines (nccl_init_tuning.hpp), each rank is scheduled by
// nccl228_scheduler, and every operation is compared with its recorded task: the channel set
// it ran on, which plan of its launch it was in, and its place in that plan.
//
// Two modes. Scheduling (the default) takes each collective's algorithm and protocol from the
// recording and checks what the scheduler does with them. Prediction (`predict`) leaves them to
// the model's tuner (nccl228_tuner.hpp) and also compares the algorithm, protocol and warps it
// picks. Both take the launch boundaries (the user's group calls) from the recording.
#include <array>
#include <map>
#include <string>
#include <vector>

#include "engine/core/result.hpp"
#include "engine/plan/comm_shape.hpp"
#include "engine/plan/groundtruth.hpp"

namespace railcheck::plan {

struct RecordedRun {
  std::string name;
  std::vector<TruthTrace> ranks;  // by rank
  CommShape shape;
  std::vector<std::string> notes;
};

struct NamedText {
  std::string name;
  std::string text;
};

// One workload: every rank's profiler trace and (optionally) its NCCL log. Errors name the file.
Result<RecordedRun> load_recorded_run(const std::string& name, const std::vector<NamedText>& traces,
                                      const std::vector<NamedText>& logs);

struct OpSide {
  int plan = -1;      // plan index within the op's launch
  int position = -1;  // place in the plan
  std::vector<int> channels;
  int nchannels = 0;  // the recording's task descriptor (model: channels.size())
  int algo = -1;      // collectives: NCCL_ALGO_*, NCCL_PROTO_* indices and nWarps
  int proto = -1;
  int warps = 0;
};

// The fields an operation is compared on; algorithm, protocol and warps for collectives only and
// only when predicting. A task the recording shows no kernel-channel events for (a self copy:
// kernel-channel events come from proxy ops, and a copy to oneself has none) is compared on its
// channel count (the task descriptor's nchannels) instead of its channel set.
enum class AlignField : std::uint8_t { Algorithm, Protocol, Warps, Channels, ChannelCount, Plan, Position };
constexpr std::array<AlignField, 7> kAlignFields = {AlignField::Algorithm, AlignField::Protocol,     AlignField::Warps,
                                                    AlignField::Channels,  AlignField::ChannelCount, AlignField::Plan,
                                                    AlignField::Position};
std::string_view name(AlignField f);

struct OpAlignment {
  std::string workload;
  int rank = 0;
  int call = 0;      // index of the user call on its rank
  std::string func;  // AllReduce, ..., Send, Recv
  std::string what;  // "AllReduce 65536 ncclFloat32"
  bool matched = false;
  std::vector<AlignField> differing;
  OpSide truth;
  OpSide model;
  std::string rule;  // the NCCL rules that decided the model's side
};

struct Tally {
  int ops = 0;
  int matched = 0;
};

struct AlignmentReport {
  std::vector<std::string> workloads;  // in the order aligned
  std::map<std::string, Tally> by_workload;
  std::map<std::string, Tally> by_func;
  std::map<AlignField, Tally> by_field;
  std::map<std::string, std::string> config;  // workload -> "2 ranks, 2 nodes, 2 coll / 2 p2p channels, ..."
  std::vector<OpAlignment> mismatches;        // every mismatch, in order
  Tally total;
};

// Aligns one run and adds it to `report`. Fails when the model cannot schedule the calls (an
// operation it does not know), naming the workload.
Result<bool> align_run(const RecordedRun& run, AlignmentReport& report, bool predict = false);

}  // namespace railcheck::plan
