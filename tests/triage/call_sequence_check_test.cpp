// The call-sequence rules (triage/call_sequence_check.hpp) on small made-up dumps: which
// differences are the hang's cause and which are its effect.
#include "triage/call_sequence_check.hpp"

#include <catch2/catch.hpp>

namespace railcheck::triage {
namespace {

FrEntry coll(std::int64_t seq, const std::string& op, std::int64_t n, const std::string& state, int line = 0) {
  FrEntry e;
  e.record_id = static_cast<std::uint64_t>(seq);
  e.pg = "0";
  e.coll_seq = seq;
  e.op = op;
  e.in_sizes = e.out_sizes = {{n}};
  e.in_dtypes = e.out_dtypes = {"Float"};
  e.state = state;
  if (line > 0) e.site = CallSite{"/job/train.py", line, "step"};
  return e;
}

FrEntry p2p(std::uint64_t id, std::int64_t p2p_seq, const std::string& op, std::uint32_t peer,
            const std::string& state) {
  FrEntry e;
  e.record_id = id;
  e.pg = "0";
  e.p2p_seq = p2p_seq;
  e.op = op;
  e.is_p2p = true;
  e.peer = peer;
  e.in_sizes = e.out_sizes = {{1024}};
  e.in_dtypes = e.out_dtypes = {"Float"};
  e.state = state;
  return e;
}

FrDump dump(std::uint32_t rank, std::uint32_t world, std::vector<FrEntry> entries) {
  FrDump d;
  d.rank = rank;
  d.source = "rank_" + std::to_string(rank);
  FrProcessGroup pg{"0", "default_pg", {}};
  for (std::uint32_t r = 0; r < world; ++r) pg.ranks.push_back(r);
  d.pgs = {pg};
  d.entries = std::move(entries);
  for (std::size_t i = 0; i < d.entries.size(); ++i) d.entries[i].record_id = i;
  return d;
}

TEST_CASE("triage: a rank stuck in an earlier collective is the hang's effect and no finding", "[triage][sequence]") {
  const auto f = check_call_sequences({
      dump(0, 2, {coll(1, "all_reduce", 8, "completed"), coll(2, "all_reduce", 8, "scheduled")}),
      dump(1, 2, {coll(1, "all_reduce", 8, "scheduled")}),
  });
  CHECK(f.empty());
}

TEST_CASE("triage: a rank that completed everything and lacks a collective never issued it", "[triage][sequence]") {
  const auto f = check_call_sequences({
      dump(0, 3, {coll(1, "all_reduce", 8, "completed"), coll(2, "broadcast", 8, "scheduled")}),
      dump(1, 3, {coll(1, "all_reduce", 8, "completed"), coll(2, "broadcast", 8, "scheduled")}),
      dump(2, 3, {coll(1, "all_reduce", 8, "completed")}),
  });
  REQUIRE(f.size() == 1);
  CHECK(f[0].kind == SequenceFinding::Kind::Missing);
  CHECK(f[0].seq == 2);
  CHECK(f[0].ranks == std::vector<std::uint32_t>{2});
  CHECK_THAT(f[0].headline, Catch::Contains("never by rank 2"));
}

TEST_CASE("triage: the majority's call is right and the minority is blamed for a size mismatch", "[triage][sequence]") {
  const auto f = check_call_sequences({
      dump(0, 3, {coll(1, "all_reduce", 8, "scheduled")}),
      dump(1, 3, {coll(1, "all_reduce", 16, "scheduled")}),
      dump(2, 3, {coll(1, "all_reduce", 8, "scheduled")}),
  });
  REQUIRE(f.size() == 1);
  CHECK(f[0].kind == SequenceFinding::Kind::Mismatch);
  CHECK(f[0].ranks == std::vector<std::uint32_t>{1});
}

TEST_CASE("triage: uneven all-to-all shapes are not a mismatch", "[triage][sequence]") {
  const auto f = check_call_sequences({
      dump(0, 2, {coll(1, "all_to_all", 8, "completed")}),
      dump(1, 2, {coll(1, "all_to_all", 24, "completed")}),
  });
  CHECK(f.empty());
}

TEST_CASE("triage: in an alternating loop the skip goes to the rank whose shift holds for every later call",
          "[triage][sequence]") {
  // Rank 1 skipped the step-2 gradient all-reduce (line 10) of A(10) B(11) A B A B A B.
  std::vector<FrEntry> r0, r1;
  const int lines0[] = {10, 11, 10, 11, 10, 11, 10, 11};
  const int lines1[] = {10, 11, 10, 11, 11, 10, 11};
  for (int i = 0; i < 8; ++i)
    r0.push_back(coll(i + 1, "all_reduce", lines0[i] == 10 ? 1024 : 1, i < 4 ? "completed" : "scheduled", lines0[i]));
  for (int i = 0; i < 7; ++i)
    r1.push_back(coll(i + 1, "all_reduce", lines1[i] == 10 ? 1024 : 1, i < 4 ? "completed" : "scheduled", lines1[i]));
  const auto f = check_call_sequences({dump(0, 2, r0), dump(1, 2, r1)});
  REQUIRE_FALSE(f.empty());
  CHECK(f[0].kind == SequenceFinding::Kind::Missing);
  CHECK(f[0].seq == 5);
  CHECK(f[0].ranks == std::vector<std::uint32_t>{1});
  CHECK_THAT(f[0].headline, Catch::Contains("rank 1 skipped 1 call that rank 0 issued"));
  CHECK_THAT(f[0].headline, Catch::Contains("train.py:10"));
}

TEST_CASE("triage: a send without a receive is blamed on the side that moved past it", "[triage][sequence]") {
  // Rank 0 sent twice to rank 1; rank 1 received once and went on to a collective.
  const auto f = check_call_sequences({
      dump(0, 2, {p2p(0, 1, "send", 1, "completed"), p2p(1, 2, "send", 1, "scheduled")}),
      dump(1, 2, {p2p(0, 1, "recv", 0, "completed"), coll(1, "all_reduce", 8, "scheduled")}),
  });
  REQUIRE(f.size() == 1);
  CHECK(f[0].kind == SequenceFinding::Kind::P2pMissing);
  CHECK(f[0].ranks == std::vector<std::uint32_t>{1});
  CHECK_THAT(f[0].headline, Catch::Contains("rank 0 sent 2 messages to rank 1, which posted 1 receive"));
}

TEST_CASE("triage: a receive still pending with the peer is not blamed yet", "[triage][sequence]") {
  const auto f = check_call_sequences({
      dump(0, 2, {p2p(0, 1, "send", 1, "completed"), p2p(1, 2, "send", 1, "scheduled")}),
      dump(1, 2, {p2p(0, 1, "recv", 0, "completed"), p2p(1, 2, "send", 0, "scheduled")}),
  });
  for (const auto& x : f) CHECK(x.kind != SequenceFinding::Kind::P2pMissing);
}

TEST_CASE("triage: a batch's closing coalesced entry is not a collective", "[triage][sequence]") {
  FrEntry marker = coll(1, "coalesced", 0, "completed");
  marker.in_sizes = marker.out_sizes = {};
  marker.p2p_seq = 1;
  auto d = dump(0, 2, {coll(1, "all_reduce", 8, "completed"), p2p(1, 1, "send", 1, "scheduled"), marker});
  CHECK(is_p2p_batch_marker(d.entries, 2));
  CHECK_FALSE(is_p2p_batch_marker(d.entries, 0));
}

}  // namespace
}  // namespace railcheck::triage
