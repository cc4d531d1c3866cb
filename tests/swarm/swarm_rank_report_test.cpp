// What one mpirun rank of a swarm campaign sends the others (swarm/swarm_rank_report.hpp) and
// how the ranks' tallies merge (swarm/swarm_tally.hpp): a report survives the trip through its
// words, a rank's every-n-th seeds take a few words, a cut or corrupt report is refused, and
// the merged seeds are named exactly. Plus the pool's stride, which gives each rank its part.
#include "swarm/swarm_rank_report.hpp"

#include <catch2/catch.hpp>
#include <set>

#include "swarm/swarm_pool.hpp"
#include "swarm/swarm_tally.hpp"

namespace railcheck::swarm {
namespace {

SeedResult seed_result(std::uint64_t seed, bool finding) {
  SeedResult r;
  r.seed = seed;
  r.enabled = 0b1011;
  r.drawn = 0b0010;
  r.phases = 0b00011;
  r.triggers = 0b10000;
  r.connection_failed = seed % 3 == 0;
  r.ranks = static_cast<std::uint32_t>(2 + seed % 7);
  r.sim_end = Nanos{1000 + static_cast<std::int64_t>(seed)};
  if (finding) r.finding = Finding{FindingKind::Liveness, Nanos{42}, 3, "the stream hung; \"quoted\" and\ttabbed"};
  return r;
}

// Rank `rank` of `ranks`: seeds first + rank + k*ranks for k < count, the last one a finding.
RankReport rank_part(std::uint64_t first, std::uint64_t rank, std::uint64_t ranks, std::uint64_t count) {
  RankReport rep;
  rep.jobs = 2;
  rep.wall_us = 1234;
  for (std::uint64_t k = 0; k < count; ++k) rep.tally.add(seed_result(first + rank + k * ranks, k + 1 == count), {});
  return rep;
}

}  // namespace

TEST_CASE("a swarm rank report decodes to the tally it was made from") {
  const RankReport sent = rank_part(100, 1, 4, 50);
  const std::vector<std::uint64_t> words = encode_report(sent, 4);
  // Fifty seeds every 4th are one run of three words, not fifty: a whole part costs a few words.
  CHECK(words.size() < 80);
  const auto got = decode_report(words);
  REQUIRE(got);
  const SwarmTally& a = sent.tally;
  const SwarmTally& b = got->tally;
  CHECK(b.runs == 50);
  CHECK(b.findings == 1);
  CHECK(b.failed_cleanly == a.failed_cleanly);
  CHECK(b.enabled == a.enabled);
  CHECK(b.drawn == a.drawn);
  CHECK(b.phases == a.phases);
  CHECK(b.triggers == a.triggers);
  CHECK(b.largest == a.largest);
  CHECK(b.sim_ns == a.sim_ns);
  CHECK(std::set<std::uint64_t>(b.seeds.begin(), b.seeds.end()) ==
        std::set<std::uint64_t>(a.seeds.begin(), a.seeds.end()));
  CHECK(b.finding_lines == a.finding_lines);  // tabs and quotes included
  CHECK(got->jobs == 2);
  CHECK(got->wall_us == 1234);
  CHECK_FALSE(got->error);
}

TEST_CASE("a swarm rank report carries a rank's error") {
  RankReport failed;
  failed.error = "fork: Resource temporarily unavailable (fewer jobs (-j))";
  const auto got = decode_report(encode_report(failed, 2));
  REQUIRE(got);
  REQUIRE(got->error);
  CHECK(*got->error == *failed.error);
  CHECK(got->tally.runs == 0);
}

TEST_CASE("a cut or corrupt swarm rank report is refused, not misread") {
  const std::vector<std::uint64_t> words = encode_report(rank_part(1, 0, 2, 10), 2);
  for (std::size_t cut = 0; cut < words.size(); ++cut) {
    INFO("cut to " << cut << " of " << words.size() << " words");
    CHECK_FALSE(decode_report(std::span<const std::uint64_t>(words.data(), cut)));
  }
  std::vector<std::uint64_t> longer = words;
  longer.push_back(0);
  CHECK_FALSE(decode_report(longer));
  std::vector<std::uint64_t> other_version = words;
  other_version[0] = 99;
  const auto v = decode_report(other_version);
  REQUIRE_FALSE(v);
  CHECK(v.error().what.find("version 99") != std::string::npos);
  // A seed count that disagrees with the runs counter (here: a run claiming 2^40 seeds).
  std::vector<std::uint64_t> huge = words;
  const std::size_t first_run = 7 + 2 * kFaultKinds + kPhases + kTriggers + 3;  // after the run count
  REQUIRE(huge[first_run - 1] >= 1);
  huge[first_run + 1] = std::uint64_t{1} << 40;
  CHECK_FALSE(decode_report(huge));
}

TEST_CASE("the ranks' tallies merge to every seed once and name them exactly") {
  SwarmTally all;
  for (std::uint64_t rank = 0; rank < 3; ++rank) {
    const auto got = decode_report(encode_report(rank_part(10, rank, 3, rank == 2 ? 3 : 4), 3));
    REQUIRE(got);
    all.merge(got->tally);
  }
  CHECK(all.runs == 11);
  CHECK(all.findings == 3);
  CHECK(all.finding_lines.size() == 3);
  CHECK_FALSE(repeated_seed(all.seeds));
  CHECK(seeds_text(all.seeds) == "10..20");
  // --for cut rank 1 short: the seeds that did not run show as the gaps.
  all.merge(rank_part(22, 0, 3, 1).tally);
  CHECK(seeds_text(all.seeds) == "10..20, 22");
  // One rank ran on past the others: its every-3rd seeds name one progression.
  all.merge(rank_part(26, 0, 3, 4).tally);
  CHECK(seeds_text(all.seeds) == "10..20, 22, 26..35 step 3");
  CHECK(seeds_text({1, 2, 4, 6, 9}) == "1..2, 4, 6, 9");
  all.merge(rank_part(10, 1, 3, 1).tally);
  CHECK(repeated_seed(all.seeds) == std::optional<std::uint64_t>(11));
  CHECK(seeds_text({}) == "none");
}

TEST_CASE("a swarm pool with a stride runs every stride-th seed and each once") {
  PoolPlan plan;
  plan.first_seed = 5;  // rank 1 of 3 from seed 4
  plan.stride = 3;
  plan.seeds = 5;
  plan.jobs = 2;
  plan.seeds_per_process = 2;  // lanes move on to fresh workers mid-part
  std::multiset<std::uint64_t> ran;
  auto ok = run_pool(plan, {}, [&](const SeedResult& r) { ran.insert(r.seed); }, {});
  REQUIRE(ok);
  CHECK(ran == std::multiset<std::uint64_t>{5, 8, 11, 14, 17});
}

}  // namespace railcheck::swarm
