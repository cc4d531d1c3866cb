#pragma once
// The NCCL settings one rank ran with, as the 2.28 scheduler model reads them (issue 40). NCCL
// reads its environment per process, so ranks of one job can run with different settings (a
// node with another environment is the usual cause); each rank is modelled from its own.
//
// kPlanKnobs is the one declaration of every environment variable NCCL 2.28.9's tuner and
// enqueue path read that the model honours: its name, which field of a collective's plan it
// can change, and where NCCL reads it. Parsing (ENV lines, --nccl-env, env.txt), applying to a
// rank's CommShape and naming the cause of a divergence are all driven by this table.
//
// Sources of a rank's settings, per variable, the first that has it:
//   1. the option: `--nccl-env 'NCCL_PROTO=LL 1:NCCL_NTHREADS=128'` (no prefix = every rank)
//   2. the rank's own log: "NCCL INFO NCCL_PROTO set by environment to LL" (NCCL_ENV subsystem;
//      NCCL_PARAM variables print "NCCL_BUFFSIZE set by environment to 1048576.", src/misc/param.cc)
//   3. env.txt: "# env VAR=VAL ..." (every rank) and "# rank R env VAR=VAL ..." (rank R)
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/result.hpp"
#include "engine/plan/comm_shape.hpp"
#include "engine/plan/nccl228_algo_proto_env.hpp"

namespace railcheck::plan {

// What part of a collective's (or p2p's) plan a setting can change. Ranks must agree on every one
// of these: each channel's blocks of all ranks form one ring or tree, exchanging step-sized slots.
enum class PlanField : std::uint8_t { Algorithm, Protocol, Channels, Threads, Chunking, P2p };
std::string_view name(PlanField f);

struct PlanKnob {
  std::string_view var;
  PlanField field;
  bool tuner;  // decides the TUNING line (algorithm, protocol, channels, threads): a rank whose
               // tuner inputs differ cannot take another rank's TUNING lines
  std::string_view source;
};

inline constexpr std::array<PlanKnob, 16> kPlanKnobs{{
    {"NCCL_ALGO", PlanField::Algorithm, true, "src/graph/tuning.cc ncclTopoTuneModel (parseList -> algoEnable)"},
    {"NCCL_PROTO", PlanField::Protocol, true, "src/graph/tuning.cc ncclTopoTuneModel (parseList -> protoEnable)"},
    {"NCCL_MIN_NCHANNELS", PlanField::Channels, true, "src/graph/connect.cc ncclTopoPostset (ncclMinNchannels)"},
    {"NCCL_MAX_NCHANNELS", PlanField::Channels, true, "src/graph/connect.cc ncclTopoPostset (ncclMaxNchannels)"},
    {"NCCL_MIN_CTAS", PlanField::Channels, true, "src/init.cc config.minCTAs -> connect.cc ncclTopoPostset"},
    {"NCCL_MAX_CTAS", PlanField::Channels, true, "src/init.cc config.maxCTAs -> connect.cc ncclTopoPostset"},
    {"NCCL_NTHREADS", PlanField::Channels, true,
     "src/graph/tuning.cc ncclTopoTuneModel getNthreads -> comm->maxThreads, read by enqueue.cc topoGetAlgoInfo's "
     "channel and thread loops"},
    {"NCCL_LL128_NTHREADS", PlanField::Channels, true, "src/graph/tuning.cc ncclTopoTuneModel getNthreads (LL128)"},
    {"NCCL_BUFFSIZE", PlanField::Chunking, false,
     "src/init.cc computeBuffSizes -> buffSizes[SIMPLE] (step = buffSize / NCCL_STEPS; caps the p2p chunk)"},
    {"NCCL_LL_BUFFSIZE", PlanField::Chunking, false, "src/init.cc computeBuffSizes -> buffSizes[LL]"},
    {"NCCL_LL128_BUFFSIZE", PlanField::Chunking, false, "src/init.cc computeBuffSizes -> buffSizes[LL128]"},
    {"NCCL_P2P_NET_CHUNKSIZE", PlanField::P2p, false, "src/init.cc computeBuffSizes (nNodes > 1)"},
    {"NCCL_P2P_NVL_CHUNKSIZE", PlanField::P2p, false, "src/init.cc computeBuffSizes (one node, all NVLink)"},
    {"NCCL_P2P_PCI_CHUNKSIZE", PlanField::P2p, false, "src/init.cc computeBuffSizes (one node, not all NVLink)"},
    {"NCCL_NCHANNELS_PER_NET_PEER", PlanField::P2p, false,
     "src/init.cc config.nChannelsPerNetPeer -> graph/paths.cc ncclTopoComputeP2pChannels"},
    {"NCCL_P2P_LL_THRESHOLD", PlanField::P2p, false, "src/enqueue.cc addP2pToPlan (LL at or under it)"},
}};

const PlanKnob* plan_knob(std::string_view var);

// One rank's settings, by variable, each with where it was read.
struct RankEnv {
  std::map<std::string, EnvSetting, std::less<>> values;
  bool log_has_env_lines = false;  // its log shows NCCL_ENV lines at all ("... set by environment to ...")

  const EnvSetting* find(std::string_view var) const;
  // "NCCL_PROTO=LL (rank1.log:31)", or "NCCL_PROTO not set (NCCL's default)".
  std::string describe(std::string_view var) const;
};

// The settings a log's ENV lines show (every knob of kPlanKnobs).
RankEnv env_from_log(std::string_view text, std::string_view origin);

// Settings given for every rank and for single ranks, by --nccl-env or env.txt.
struct GivenEnv {
  RankEnv every_rank;
  std::map<std::uint32_t, RankEnv> by_rank;
  bool empty() const { return every_rank.values.empty() && by_rank.empty(); }
  // `rank`'s settings from here: its own, else the every-rank ones.
  RankEnv for_rank(std::uint32_t rank) const;
};

// "NCCL_PROTO=LL 1:NCCL_NTHREADS=128": whitespace-separated, an optional "R:" prefix per entry.
// An unknown variable, a repeated one for the same ranks or a value NCCL would reject is an error.
Result<GivenEnv> env_from_option(std::string_view text, std::string_view origin);

// env.txt: "# env VAR=VAL ..." and "# rank R env VAR=VAL ..." lines; other variables skipped.
GivenEnv env_from_env_txt(std::string_view text, std::string_view origin);

// Per variable, `first`'s where it has one, else `second`'s.
RankEnv prefer(const RankEnv& first, const RankEnv& second);

// What the rank's own INIT lines already settled (those values are NCCL's result, settings
// included, and win over recomputing them from the settings).
struct OwnInitFacts {
  bool coll_channels = false;
  bool p2p_chunk = false;
  bool p2p_channels = false;
  bool max_threads = false;
};

// Applies `env` to a rank's shape as NCCL 2.28.9 does (the sources in kPlanKnobs); returns one
// note per setting taken. A value NCCL would reject (NCCL_PROTO=foo) is an error naming it.
Result<std::vector<std::string>> apply_rank_env(const RankEnv& env, const OwnInitFacts& own, CommShape& shape);

// NCCL's getNthreads (src/graph/tuning.cc): the setting if it is a positive multiple of 32 within
// [min, max], max if not a multiple of 32 or above max, min below it; `def` when unset.
int nccl_get_nthreads(std::optional<std::int64_t> env, int min, int max, int def);

// The tuner's inputs of two ranks are equal: every tuner knob has the same value (or is unset on both).
bool same_tuner_inputs(const RankEnv& a, const RankEnv& b);

// The settings that differ between two ranks and can change `field`, as text for a verdict:
// "rank 1: NCCL_PROTO=LL (rank1.log:31); rank 0: NCCL_PROTO not set (NCCL's default)". Empty when none.
std::vector<std::string> differing_settings(const RankEnv& a, std::uint32_t rank_a, const RankEnv& b,
                                            std::uint32_t rank_b, PlanField field);

}  // namespace railcheck::plan
