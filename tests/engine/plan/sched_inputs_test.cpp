// Scheduling inputs: the JSON-lines trace (engine/plan/sched_trace.hpp) and the NCCL COLL log
// importer (engine/plan/nccl_log_import.hpp): real-format lines parse, bad lines are rejected
// with their line number, unknown operations are reported.
#include <catch2/catch.hpp>

#include "engine/plan/nccl_log_import.hpp"
#include "engine/plan/sched_trace.hpp"
#include "tests/engine/plan/shipped_file.hpp"

namespace railcheck::plan {
namespace {

const char* kOpLine =
    "node1:100:100 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x7f00 recvbuff 0x7f00 count 1024 datatype 7 op 0 "
    "root 0 comm 0x55aa [nranks=1] stream 0x55bb\n";

TEST_CASE("a merged real-format COLL log imports ranks from its Init lines and groups by opCount", "[plan][log]") {
  auto log = import_nccl_logs({LogFile{"two_rank_coll.log", shipped_file("scenarios/sched/two_rank_coll.log")}});
  REQUIRE(log.ok());
  const auto& in = log->input;
  CHECK(in.shape.nranks == 2);
  REQUIRE(in.ranks.size() == 2);
  REQUIRE(in.ranks[1].groups.size() == 2);
  const auto& g = in.ranks[1].groups[1];
  REQUIRE(g.p2ps.size() == 2);
  CHECK(g.p2ps[0].dir == P2pDir::Send);
  CHECK(g.p2ps[0].peer == 0);
  CHECK(g.p2ps[0].bytes == 65536);
  REQUIRE(g.colls.size() == 1);
  CHECK(g.colls[0].dtype == DataType::Bfloat16);
  CHECK(g.colls[0].count == 1048576);
  CHECK(g.colls[0].source_line == 12);
  // Its connections are P2P (no proxy ops, so NCCL 2.28's opCount cannot separate launches), and
  // it has no INIT ring lines, so the model's default channel count stands; it says both, and that
  // without ENV lines every rank is modelled with NCCL's default settings.
  REQUIRE(log->notes.size() == 3);
  CHECK_THAT(log->notes[0], Catch::Contains("P2P") && Catch::Contains("cannot tell the group boundaries"));
  CHECK_THAT(log->notes[1], Catch::Contains("no INIT ring lines") && Catch::Contains("assuming 4 channels"));
  CHECK_THAT(log->notes[2], Catch::Contains("ranks 0, 1 have no ENV lines") && Catch::Contains("NCCL's defaults"));
}

TEST_CASE("the channel count comes from the INIT ring lines, not the transport lines", "[plan][log]") {
  const std::string ring = "vm:1:1 [0] NCCL INFO Channel 00/02 : 0\nvm:1:1 [0] NCCL INFO Channel 01/02 : 0\n";
  const std::string transport = "vm:1:1 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via NET/Socket/0\n";
  auto log = import_nccl_logs({LogFile{"r0.log", ring + transport + kOpLine}});
  REQUIRE(log.ok());
  CHECK(log->input.shape.coll_channels == 2);
  // Three notes: no Init lines (ranks by appearance), where the channel count came from, no ENV lines.
  REQUIRE(log->notes.size() == 3);
  CHECK_THAT(log->notes[0], Catch::Contains("no 'Init COMPLETE' lines"));
  CHECK_THAT(log->notes[1], Catch::Contains("may use 2 channels") && Catch::Contains("INIT ring lines"));
  CHECK_THAT(log->notes[2], Catch::Contains("rank 0 has no ENV lines"));

  auto bad = import_nccl_logs({LogFile{"r0.log", std::string("vm:1:1 [0] NCCL INFO Channel 00/99 : 0\n") + kOpLine}});
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.error().what, Catch::StartsWith("r0.log:1: ring line: channel count 99 is outside [1, 64]"));
}

TEST_CASE("real NCCL 2.28.9 logs give the channel count NCCL chose", "[plan][log][groundtruth]") {
  // Recorded on one H100 (scenarios/groundtruth/README.md): NCCL chose 2 channels by default,
  // 1 under NCCL_MAX_NCHANNELS=1 and 4 under NCCL_MIN_NCHANNELS=4.
  for (const auto& [workload, channels] : {std::pair{"single_ops", 2u}, {"maxnch1", 1u}, {"minnch4", 4u}}) {
    INFO("workload " << workload);
    const std::string dir = std::string("scenarios/groundtruth/") + workload + "/";
    auto log = import_nccl_logs(
        {LogFile{"rank0.log", shipped_file(dir + "rank0.log")}, LogFile{"rank1.log", shipped_file(dir + "rank1.log")}});
    REQUIRE(log.ok());
    CHECK(log->input.shape.coll_channels == channels);
  }
}

TEST_CASE("per-rank logs without Init lines take the rank from the file's position", "[plan][log]") {
  std::string r0 = kOpLine, r1 = kOpLine;
  r0.replace(r0.find("nranks=1"), 8, "nranks=2");
  r1.replace(r1.find("nranks=1"), 8, "nranks=2");
  auto log = import_nccl_logs({LogFile{"rank0.log", r0}, LogFile{"rank1.log", r1}});
  REQUIRE(log.ok());
  CHECK(log->input.ranks[0].groups.size() == 1);
  CHECK(log->input.ranks[1].groups.size() == 1);
}

TEST_CASE("ranks with no lines in the log are named in a note", "[plan][log]") {
  std::string text = kOpLine;
  text.replace(text.find("nranks=1"), 8, "nranks=4");
  auto log = import_nccl_logs({LogFile{"r0.log", text}});
  REQUIRE(log.ok());
  // numbered by appearance, no transport lines, no ring lines, no ENV lines, silent ranks
  REQUIRE(log->notes.size() == 5);
  CHECK_THAT(log->notes[4], Catch::Contains("3 of 4 ranks") && Catch::Contains("rank 1"));
}

TEST_CASE("a COLL line with a missing field is rejected with its file and line", "[plan][log]") {
  std::string text = std::string("node1:100:100 [0] NCCL INFO Using network IB\n") + kOpLine +
                     "node1:100:100 [0] NCCL INFO AllReduce: opCount 1 sendbuff 0x1 recvbuff 0x1 count 1024 op 0\n";
  auto log = import_nccl_logs({LogFile{"r0.log", text}});
  REQUIRE_FALSE(log.ok());
  CHECK_THAT(log.error().what, Catch::StartsWith("r0.log:3: malformed NCCL COLL line"));
}

TEST_CASE("an operation the model does not know is reported, not skipped", "[plan][log]") {
  std::string text = kOpLine;
  text.replace(text.find("AllReduce"), 9, "AllToAll");
  auto log = import_nccl_logs({LogFile{"r0.log", text}});
  REQUIRE_FALSE(log.ok());
  CHECK_THAT(log.error().what, Catch::Contains("r0.log:1") && Catch::Contains("unknown operation 'AllToAll'"));
}

TEST_CASE("an unknown datatype code is rejected", "[plan][log]") {
  std::string text = kOpLine;
  text.replace(text.find("datatype 7"), 10, "datatype 42");
  auto log = import_nccl_logs({LogFile{"r0.log", text}});
  REQUIRE_FALSE(log.ok());
  CHECK_THAT(log.error().what, Catch::Contains("datatype code 42"));
}

TEST_CASE("the shipped trace parses into groups and ops outside a group are groups of their own", "[plan][trace]") {
  auto in = parse_sched_trace(shipped_file("scenarios/sched/two_rank.jsonl"), "two_rank.jsonl");
  REQUIRE(in.ok());
  CHECK(in->shape.nranks == 2);
  CHECK(in->shape.coll_channels == 2);
  REQUIRE(in->ranks[0].groups.size() == 2);
  CHECK(in->ranks[0].groups[0].colls.size() == 1);
  CHECK(in->ranks[0].groups[1].p2ps.size() == 2);
  CHECK(in->ranks[0].groups[1].colls[0].channels == 1);
}

TEST_CASE("trace errors name the line", "[plan][trace]") {
  SECTION("malformed JSON") {
    auto in = parse_sched_trace("{\"rank\":0,\"ev\":\"group_start\"}\n{oops\n", "t.jsonl");
    REQUIRE_FALSE(in.ok());
    CHECK_THAT(in.error().what, Catch::StartsWith("t.jsonl:2: not a JSON object"));
  }
  SECTION("unknown key") {
    auto in = parse_sched_trace("{\"rank\":0,\"ev\":\"send\",\"peer\":1,\"bytes\":4,\"tag\":3}\n", "t.jsonl");
    REQUIRE_FALSE(in.ok());
    CHECK_THAT(in.error().what, Catch::Contains("t.jsonl:1: unknown key 'tag'"));
  }
  SECTION("unknown collective") {
    auto in = parse_sched_trace("{\"rank\":0,\"ev\":\"coll\",\"op\":\"AllToAll\",\"count\":4,\"dtype\":\"int8\"}\n",
                                "t.jsonl");
    REQUIRE_FALSE(in.ok());
    CHECK_THAT(in.error().what, Catch::Contains("t.jsonl:1: unknown collective 'AllToAll'"));
  }
  SECTION("group end without start") {
    auto in = parse_sched_trace("{\"rank\":0,\"ev\":\"group_end\"}\n", "t.jsonl");
    REQUIRE_FALSE(in.ok());
    CHECK_THAT(in.error().what, Catch::Contains("t.jsonl:1") && Catch::Contains("without a group start"));
  }
  SECTION("peer outside the communicator") {
    auto in = parse_sched_trace(
        "{\"rank\":0,\"ev\":\"send\",\"peer\":0,\"bytes\":4}\n"
        "{\"rank\":1,\"ev\":\"send\",\"peer\":7,\"bytes\":4}\n",
        "t.jsonl");
    REQUIRE_FALSE(in.ok());
    CHECK_THAT(in.error().what, Catch::StartsWith("t.jsonl:2: peer 7 is outside the communicator of 2 ranks"));
  }
  SECTION("nranks beyond 32 bits") {
    auto in = parse_sched_trace("{\"ev\":\"comm\",\"nranks\":4294967297}\n", "t.jsonl");
    REQUIRE_FALSE(in.ok());
    CHECK_THAT(in.error().what, Catch::StartsWith("t.jsonl:1:") && Catch::Contains("32 bits"));
  }
  SECTION("unclosed group") {
    auto in = parse_sched_trace("{\"rank\":0,\"ev\":\"group_start\"}\n", "t.jsonl");
    REQUIRE_FALSE(in.ok());
    CHECK_THAT(in.error().what, Catch::Contains("still open"));
  }
}

}  // namespace
}  // namespace railcheck::plan
