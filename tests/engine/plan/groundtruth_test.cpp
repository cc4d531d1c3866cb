// The recordings of real NCCL 2.28.9 (scenarios/groundtruth/) read back and held against
// themselves: every rank's profiler trace is complete, its kernel-channel events agree with the
// TUNING lines NCCL printed for the same collectives, and the two ranks agree op by op.
#include "engine/plan/groundtruth.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>

#include "tests/engine/plan/shipped_file.hpp"

using namespace railcheck::plan;
namespace fs = std::filesystem;

namespace {

const char* kTrace =
    R"({"ev":"comm","format":"railcheck-nccl-profiler","version":1,"profiler_api":5,"comm_id":"1","rank":0,"nranks":2,"nnodes":2}
{"ev":"plan","id":4}
{"ev":"coll","id":5,"parent":2,"plan":4,"seq":0,"func":"AllReduce","count":8192,"dtype":"ncclFloat32","root":0,"nchannels":2,"nwarps":3,"algo":"RING","proto":"LL"}
{"ev":"kernel_ch","id":6,"parent":5,"channel":0}
{"ev":"kernel_ch","id":7,"parent":5,"channel":1}
{"ev":"end","dropped_events":0,"dropped_lines":0}
)";

}  // namespace

TEST_CASE("groundtruth: a trace and its TUNING line agree, and a wrong range is caught", "[plan][groundtruth]") {
  auto t = parse_truth_trace(kTrace, "t.jsonl");
  REQUIRE(t.ok());
  REQUIRE(t->ops.size() == 1);
  CHECK(t->ops[0].channels == std::set<int>{0, 1});
  CHECK(t->plans == 1);
  auto good = parse_tuning_lines(
      "vm:1:1 [0] NCCL INFO AllReduce: 32768 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..1}\n", "l");
  REQUIRE(good.ok());
  auto c = check_tuning_against_trace(t.value(), good.value());
  CHECK(c.matched == 1);
  CHECK(c.first_mismatch.empty());
  auto bad = parse_tuning_lines(
      "vm:1:1 [0] NCCL INFO AllReduce: 32768 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}\n", "l");
  REQUIRE(bad.ok());
  auto d = check_tuning_against_trace(t.value(), bad.value());
  CHECK(d.matched == 0);
  CHECK(d.first_mismatch.find("channels {0,1}") != std::string::npos);
}

TEST_CASE("groundtruth: bad input names the line", "[plan][groundtruth]") {
  auto no_end = parse_truth_trace(std::string(kTrace).substr(0, std::string(kTrace).rfind("{\"ev\":\"end\"")), "t");
  REQUIRE_FALSE(no_end.ok());
  CHECK(no_end.error().what.find("no end line") != std::string::npos);
  auto garbage = parse_truth_trace("{\"ev\":\"comm\",\"rank\":0,\"nranks\":2}\n{\"ev\":\"warp\"}\n", "t");
  REQUIRE_FALSE(garbage.ok());
  CHECK(garbage.error().what.find("t:2:") != std::string::npos);
  auto range = parse_tuning_lines("x NCCL INFO AllReduce: 8 Bytes -> Algo RING proto LL channel{Lo..Hi}={3..1}\n", "l");
  REQUIRE_FALSE(range.ok());
  CHECK(range.error().what.find("l:1:") != std::string::npos);
  // A range cut at the end of the input (found by fuzz_groundtruth: the ".." was compared past
  // the last byte). The text is copied so ASan sees exactly its bytes.
  for (std::string cut : {"={0", "={0.", "={12", "={"}) {
    const std::string text = "x NCCL INFO AllReduce: 8 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}" + cut;
    const std::vector<char> exact(text.begin(), text.end());
    auto r = parse_tuning_lines(std::string_view(exact.data(), exact.size()), "cut");
    INFO(cut);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().what.find("bad channel range") != std::string::npos);
  }
}

TEST_CASE("groundtruth: every committed recording is complete and self-consistent", "[plan][groundtruth]") {
  fs::path root = fs::path(RAILCHECK_SOURCE_DIR) / "scenarios" / "groundtruth";
  int workloads = 0;
  int colls = 0;
  for (const auto& dir : fs::directory_iterator(root)) {
    if (!dir.is_directory()) continue;
    ++workloads;
    std::string name = dir.path().filename().string();
    INFO(name);
    std::vector<TruthTrace> ranks;
    for (const auto& f : fs::directory_iterator(dir.path())) {
      std::string fname = f.path().filename().string();
      if (fname.rfind("railcheck-prof-", 0) != 0) continue;
      auto rel = fs::relative(f.path(), RAILCHECK_SOURCE_DIR).string();
      auto t = parse_truth_trace(shipped_file(rel), rel);
      REQUIRE(t.ok());
      REQUIRE((t->rank >= 0 && t->rank < t->nranks));
      ranks.resize(static_cast<std::size_t>(t->nranks));
      ranks[static_cast<std::size_t>(t->rank)] = t.value();
    }
    REQUIRE(ranks.size() >= 2);
    for (int r = 0; r < static_cast<int>(ranks.size()); ++r) {
      const auto& t = ranks[static_cast<std::size_t>(r)];
      REQUIRE(t.rank == r);
      CHECK(!t.ops.empty());
      auto rel = "scenarios/groundtruth/" + name + "/rank" + std::to_string(r) + ".log";
      auto tuning = parse_tuning_lines(shipped_file(rel), rel);
      REQUIRE(tuning.ok());
      // NCCL prints TUNING lines on rank 0 only (src/enqueue.cc, scheduleCollTasksToPlan:
      // `if (comm->rank == 0) INFO(NCCL_TUNING, ...)`); rank 1's channels are held by the
      // cross-rank check below.
      if (r != 0) {
        CHECK(tuning->empty());
        continue;
      }
      auto c = check_tuning_against_trace(t, tuning.value());
      INFO(c.first_mismatch);
      CHECK(c.matched == c.compared);
      CHECK(c.first_mismatch.empty());
      colls += c.compared;
      // Every task ran somewhere; a self copy has no proxy op, hence no kernel-channel events.
      for (const auto& op : t.ops)
        CHECK(static_cast<int>(op.channels.size()) >= (!op.is_coll && op.root_or_peer == r ? 0 : 1));
    }
    if (ranks.size() == 2) {  // a Send against the peer's Recv: two ranks are each other's peer
      auto agree = check_ranks_agree(ranks[0], ranks[1]);
      INFO(agree.first_mismatch);
      CHECK(agree.matched == agree.compared);
      CHECK(agree.first_mismatch.empty());
    }
    // Every rank ran every collective as rank 0 did: same order, count, algorithm, protocol, channels.
    auto colls_of = [](const TruthTrace& t) {
      std::vector<const TruthOp*> out;
      for (const auto& op : t.ops)
        if (op.is_coll) out.push_back(&op);
      return out;
    };
    const auto first = colls_of(ranks[0]);
    for (const auto& t : ranks) {
      const auto mine = colls_of(t);
      REQUIRE(mine.size() == first.size());
      for (std::size_t i = 0; i < mine.size(); ++i) {
        INFO("rank " << t.rank << " collective " << i);
        CHECK(mine[i]->count == first[i]->count);
        CHECK(mine[i]->algo == first[i]->algo);
        CHECK(mine[i]->proto == first[i]->proto);
        CHECK(mine[i]->channels == first[i]->channels);
      }
    }
  }
  CHECK(workloads >= 12);
  CHECK(colls >= 450);
}

namespace {

// The numbers after `key` on the first line holding it, separators ('|', '/', spaces) skipped.
std::vector<int> numbers_after(const std::string& text, const std::string& key) {
  std::vector<int> out;
  auto at = text.find(key);
  if (at == std::string::npos) return out;
  auto end = text.find('\n', at);
  std::string line = text.substr(at + key.size(), end - at - key.size());
  int v = 0;
  bool in = false;
  for (char ch : line) {
    if (ch >= '0' && ch <= '9') {
      v = v * 10 + (ch - '0');
      in = true;
    } else if (in) {
      out.push_back(v);
      v = 0;
      in = false;
    }
  }
  if (in) out.push_back(v);
  return out;
}

}  // namespace

TEST_CASE("groundtruth: NCCL 2.28's channel-count rule against every collective alone in its plan",
          "[plan][groundtruth]") {
  CHECK(ring_tree_channels_2_28(16383, 2, 512, 16) == 1);
  CHECK(ring_tree_channels_2_28(16384, 2, 512, 16) == 2);
  CHECK(ring_tree_channels_2_28(8, 4, 512, 16) == 1);
  fs::path root = fs::path(RAILCHECK_SOURCE_DIR) / "scenarios" / "groundtruth";
  int compared = 0;
  std::vector<std::string> misses;
  for (const auto& dir : fs::directory_iterator(root)) {
    if (!dir.is_directory()) continue;
    std::string name = dir.path().filename().string();
    std::string log = shipped_file("scenarios/groundtruth/" + name + "/rank0.log");
    auto chans = numbers_after(log, "NCCL INFO Channel 00/");
    auto thresholds = numbers_after(log, "threadThresholds ");  // Tree LL/LL128/Simple | Ring LL/LL128/Simple | ..
    auto threads = numbers_after(log, "Max NThreads |");        // Tree LL/LL128/Simple, Ring LL/LL128/Simple, ..
    REQUIRE(chans.size() >= 1);
    REQUIRE(thresholds.size() >= 6);
    REQUIRE(threads.size() >= 6);
    for (const auto& f : fs::directory_iterator(dir.path())) {
      std::string fname = f.path().filename().string();
      if (fname.rfind("railcheck-prof-", 0) != 0 || fname.find("-r0.jsonl") == std::string::npos) continue;
      auto rel = fs::relative(f.path(), RAILCHECK_SOURCE_DIR).string();
      auto t = parse_truth_trace(shipped_file(rel), rel);
      REQUIRE(t.ok());
      std::map<int, int> per_plan;
      for (const auto& op : t->ops) per_plan[op.plan] += op.is_coll ? 1 : 2;
      for (const auto& op : t->ops) {
        if (!op.is_coll || per_plan[op.plan] != 1) continue;
        const std::map<std::string, std::uint64_t> sizes{{"ncclInt8", 1},     {"ncclUint8", 1},  {"ncclFloat16", 2},
                                                         {"ncclBfloat16", 2}, {"ncclInt32", 4},  {"ncclFloat32", 4},
                                                         {"ncclInt64", 8},    {"ncclFloat64", 8}};
        REQUIRE(sizes.count(op.dtype) == 1);
        if (op.algo == "PAT") continue;  // this rule's Ring/Tree tables; PAT: align --predict (cmd_align_test)
        std::uint64_t bytes =
            op.count * sizes.at(op.dtype) * ((op.func == "AllGather" || op.func == "ReduceScatter") ? t->nranks : 1);
        std::size_t p = op.proto == "LL" ? 0 : op.proto == "LL128" ? 1 : 2;
        std::size_t a = op.algo == "TREE" ? 0 : 3;
        REQUIRE((op.algo == "TREE" || op.algo == "RING"));
        int nc = ring_tree_channels_2_28(bytes, chans[0], threads[a + p], thresholds[a + p]);
        ++compared;
        // nMaxChannels bounds the channels; scheduleCollTasksToPlan's cells may fill fewer (24
        // NVLink channels, LL128), which align --predict holds exactly (cmd_align_test).
        if (op.nchannels > nc || (chans[0] <= 2 && op.proto != "LL128" && nc != op.nchannels)) {
          misses.push_back(fmt::format("{} {} {} {} {}: NCCL {}, rule {}", name, op.func, op.count, op.algo, op.proto,
                                       op.nchannels, nc));
        }
      }
    }
  }
  std::sort(misses.begin(), misses.end());
  INFO(fmt::format("{}", fmt::join(misses, "; ")));
  CHECK(compared >= 84);  // every collective alone in its plan
  CHECK(misses.empty());
}
