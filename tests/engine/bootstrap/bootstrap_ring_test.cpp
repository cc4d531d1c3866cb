// The bootstrap's root and rank state machines driven together in memory (bootstrap_world.hpp):
// the ring all-gather under shuffled delivery orders, and every way a run can be refused or
// cut short. Each seeded case prints its seed when it fails.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/engine/bootstrap/bootstrap_world.hpp"

namespace railcheck::bootstrap {
namespace {

using Catch::Matchers::Contains;
using testing::BootstrapWorld;
using testing::ProcessSpec;

#ifdef RAILCHECK_SANITIZE
constexpr std::uint64_t kSeeds = 20;
#else
constexpr std::uint64_t kSeeds = 100;
#endif

std::vector<std::uint8_t> blob_of(std::uint32_t rank, std::size_t size, std::uint64_t seed) {
  SeededRng rng(seed * 1000 + rank);
  std::vector<std::uint8_t> b(size);
  for (auto& x : b) x = static_cast<std::uint8_t>(rng.next_u64());
  return b;
}

std::vector<ProcessSpec> ranks(std::uint32_t n, std::size_t blob_size, std::uint64_t seed) {
  std::vector<ProcessSpec> specs;
  for (std::uint32_t r = 0; r < n; ++r) specs.push_back(ProcessSpec{r, n, 0x5eed, blob_of(r, blob_size, seed)});
  return specs;
}

// Every process finished with an error that contains `text`, and nobody waited for a deadline.
void require_all_failed_with(const BootstrapWorld& w, const std::string& text) {
  for (std::size_t p = 0; p < w.processes(); ++p) {
    CAPTURE(p);
    REQUIRE(w.outcome(p).finished);
    REQUIRE(w.outcome(p).error.has_value());
    CHECK_THAT(w.outcome(p).error->what, Contains(text));
    CHECK_FALSE(w.outcome(p).error->hint.empty());
  }
  CHECK(w.root().state() == RootState::Failed);
  CHECK_FALSE(w.timed_out());
}

}  // namespace

TEST_CASE("the ring all-gather gives every rank every blob, in any delivery order", "[bootstrap][ring]") {
  for (std::uint32_t n : {1U, 2U, 3U, 5U, 8U}) {
    for (std::uint64_t seed = 1; seed <= kSeeds; ++seed) {
      INFO("nranks " << n << " seed " << seed << " (replay: BootstrapWorld(seed, ...))");
      const std::size_t size = seed % 3 == 0 ? 0 : 128;
      BootstrapWorld w(seed, n, ranks(n, size, seed));
      w.run();
      CHECK(w.root().state() == RootState::Done);
      CHECK_FALSE(w.timed_out());
      for (std::uint32_t r = 0; r < n; ++r) {
        REQUIRE(w.outcome(r).finished);
        REQUIRE_FALSE(w.outcome(r).error.has_value());
        REQUIRE(w.outcome(r).blobs.size() == n);
        for (std::uint32_t o = 0; o < n; ++o) REQUIRE(w.outcome(r).blobs[o] == blob_of(o, size, seed));
      }
    }
  }
}

TEST_CASE("a rank that checks in twice is rejected on every process", "[bootstrap][reject]") {
  for (std::uint64_t seed = 1; seed <= kSeeds; ++seed) {
    INFO("seed " << seed);
    auto specs = ranks(4, 128, seed);
    specs[3].rank = 1;  // two processes claim rank 1; rank 3 never checks in
    BootstrapWorld w(seed, 4, specs);
    w.run();
    require_all_failed_with(w, "rank 1 checked in twice");
    CHECK_THAT(w.outcome(0).error->what, Contains("(duplicate rank)"));
  }
}

TEST_CASE("a rank-count mismatch is rejected on every process", "[bootstrap][reject]") {
  for (std::uint64_t seed = 1; seed <= kSeeds; ++seed) {
    INFO("seed " << seed);
    auto specs = ranks(4, 128, seed);
    specs[2].nranks = 3;
    BootstrapWorld w(seed, 4, specs);
    w.run();
    require_all_failed_with(w, "rank 2 (proc2:ring) says nranks=3, the root was started with nranks=4");
  }
}

TEST_CASE("ranks that disagree on the blob size are rejected on every process", "[bootstrap][reject]") {
  for (std::uint64_t seed = 1; seed <= kSeeds; ++seed) {
    INFO("seed " << seed);
    auto specs = ranks(3, 128, seed);
    specs[1].blob.resize(64);
    BootstrapWorld w(seed, 3, specs);
    w.run();
    require_all_failed_with(w, "-byte blobs");
    CHECK_THAT(w.outcome(0).error->what, Contains("blob size mismatch"));
  }
}

TEST_CASE("a check-in with a rank out of range is refused, and so is everyone held", "[bootstrap][reject]") {
  // A rank cannot be built out of range locally (BootstrapRank::create refuses it), so this is
  // a peer running another build or a hand-made frame: the root must still judge it.
  auto root = BootstrapRoot::create(RootConfig{1, 2, sec(1)});
  REQUIRE(root.ok());
  RootActions out;
  root->on_frame(1, Frame{1, CheckIn{0, 2, 4, "a:1"}}, Nanos{0}, out);
  CHECK(out.empty());
  root->on_frame(2, Frame{1, CheckIn{5, 2, 4, "b:2"}}, Nanos{1}, out);
  std::vector<CheckInLink> told;
  for (const auto& a : out) {
    if (const auto* s = std::get_if<RootSend>(&a)) {
      CHECK(std::get<Abort>(s->frame.message).reason == AbortReason::RankOutOfRange);
      CHECK_THAT(std::get<Abort>(s->frame.message).text, Contains("rank 5 (b:2) is out of range for nranks=2"));
      told.push_back(s->link);
    }
  }
  CHECK(told == std::vector<CheckInLink>{1, 2});
  // Both expected check-ins are answered, so the root is finished and says why.
  CHECK(root->state() == RootState::Failed);
  REQUIRE(std::holds_alternative<RootFinished>(out.back()));
  CHECK_THAT(std::get<RootFinished>(out.back()).error->what, Contains("rank out of range"));
}

TEST_CASE("a rank that aborts while checking in makes every rank fail, through the root or the ring",
          "[bootstrap][abort]") {
  std::uint64_t through_root = 0;
  for (std::uint64_t seed = 1; seed <= kSeeds; ++seed) {
    INFO("seed " << seed);
    BootstrapWorld w(seed, 4, ranks(4, 128, seed));
    w.after_step = [](BootstrapWorld& world) {
      if (world.rank(2).state() == RankState::CheckingIn) world.abort(2, "the GPU is gone");
    };
    w.run();
    CHECK_FALSE(w.timed_out());
    CHECK_THAT(w.outcome(2).error->what, Contains("bootstrap rank 2 of 4 failed (requested): the GPU is gone"));
    // The abort follows the rank's CheckIn on the same connection. If that CheckIn completed
    // the set, the root has already answered with the ring; the ring then learns of it through
    // the refused connection to rank 2.
    const bool root_knew = w.root().state() == RootState::Failed;
    through_root += root_knew ? 1 : 0;
    for (std::size_t p = 0; p < 4; ++p) {
      CAPTURE(p);
      REQUIRE(w.outcome(p).error.has_value());
      if (root_knew) {
        CHECK_THAT(w.outcome(p).error->what, Contains("(requested): the GPU is gone"));
      } else {
        CHECK_THAT(w.outcome(p).error->what, Contains("(requested): the GPU is gone") || Contains("(peer lost)"));
      }
    }
    if (root_knew) CHECK_THAT(w.outcome(0).error->what, Contains("rank 2 aborted the run (requested)"));
  }
  CHECK(through_root > kSeeds / 2);  // the root path is the common one, and it is exercised
}

TEST_CASE("an abort during the all-gather reaches every unfinished rank around the ring", "[bootstrap][abort]") {
  for (std::uint32_t n : {3U, 5U, 8U}) {
    std::uint64_t aborted_runs = 0;
    std::uint64_t propagated = 0;
    for (std::uint64_t seed = 1; seed <= kSeeds; ++seed) {
      INFO("nranks " << n << " seed " << seed);
      const std::uint32_t victim = static_cast<std::uint32_t>(seed % n);
      BootstrapWorld w(seed, n, ranks(n, 64, seed));
      bool aborted = false;
      w.after_step = [&](BootstrapWorld& world) {
        if (world.rank(victim).state() == RankState::Gathering) {
          world.abort(victim, "out of memory");
          aborted = true;
        }
      };
      w.run();
      CHECK_FALSE(w.timed_out());  // nobody waited for a deadline: the abort travelled
      std::uint32_t failed = 0;
      for (std::uint32_t r = 0; r < n; ++r) {
        CAPTURE(r);
        REQUIRE(w.outcome(r).finished);
        if (w.outcome(r).error) {
          ++failed;
          // The text travels with the abort; a rank whose neighbour left before they were
          // connected learns it from the closed connection instead.
          CHECK_THAT(w.outcome(r).error->what, Contains("out of memory") || Contains("(peer lost)"));
        } else {
          for (std::uint32_t o = 0; o < n; ++o) CHECK(w.outcome(r).blobs[o] == blob_of(o, 64, seed));
        }
      }
      // A rank whose predecessor delivered everything before the root's answer finishes at
      // once on that answer and never sits in Gathering: then there was nothing to abort.
      if (!aborted) {
        CHECK(failed == 0);
        continue;
      }
      ++aborted_runs;
      CHECK(w.outcome(victim).error.has_value());
      // Others may finish first when the victim had already forwarded everything they need
      // (blocks held for a successor go out together on the root's answer).
      propagated += failed >= 2 ? 1 : 0;
    }
    CHECK(aborted_runs > kSeeds / 2);
    CHECK(propagated > aborted_runs / 2);  // mostly the abort has others to reach
  }
}

TEST_CASE("a rank that dies makes every other rank fail fast", "[bootstrap][abort]") {
  std::uint64_t crashes = 0;
  for (std::uint64_t seed = 1; seed <= kSeeds; ++seed) {
    INFO("seed " << seed);
    const std::uint32_t n = 5;
    const std::size_t victim = seed % n;
    const bool early = seed % 2 == 0;  // before or after the root's answer
    BootstrapWorld w(seed, n, ranks(n, 32, seed));
    bool crashed = false;
    w.after_step = [&](BootstrapWorld& world) {
      const auto s = world.rank(victim).state();
      if (!crashed && (early ? s == RankState::CheckingIn : s == RankState::Gathering)) {
        crashed = true;
        world.crash(victim);
      }
    };
    w.run();
    CHECK_FALSE(w.timed_out());
    std::uint32_t failed = 0;
    for (std::size_t p = 0; p < n; ++p) {
      if (p == victim) continue;
      CAPTURE(p);
      REQUIRE(w.outcome(p).finished);
      if (w.outcome(p).error) {
        ++failed;
        CHECK_THAT(w.outcome(p).error->what, Contains("peer lost"));
      }
    }
    if (!crashed) continue;  // the victim finished straight from CheckingIn (see above)
    ++crashes;
    // At least the predecessor: its successor closed without RingDone (or refused it).
    CHECK(failed >= 1);
  }
  CHECK(crashes > kSeeds / 2);
}

TEST_CASE("a rank that never starts makes the root time out naming it", "[bootstrap][timeout]") {
  auto specs = ranks(3, 16, 1);
  specs[1].starts = false;
  BootstrapWorld w(1, 3, specs, sec(10), sec(5));
  w.run();
  CHECK(w.timed_out());
  for (std::size_t p : {0U, 2U}) {
    REQUIRE(w.outcome(p).error.has_value());
    CHECK_THAT(w.outcome(p).error->what,
               Contains("the root aborted the run (timeout): root deadline passed with 2 of 3 ranks checked in "
                        "(missing: 1)"));
  }
  CHECK(w.root().state() == RootState::Failed);
}

TEST_CASE("a rank times out on its own when the root never answers", "[bootstrap][timeout]") {
  // The root waits 20 s, the ranks only 1 s: each rank says what it was waiting for.
  BootstrapWorld w(3, 2, {ProcessSpec{0, 2, 0x5eed, {1}}}, sec(1), sec(20));
  w.run();
  REQUIRE(w.outcome(0).error.has_value());
  CHECK_THAT(w.outcome(0).error->what,
             Contains("failed (timeout): deadline passed while waiting for the root to answer the check-in"));
}

TEST_CASE("a check-in from another run is refused without spoiling this run", "[bootstrap][reject]") {
  auto root = BootstrapRoot::create(RootConfig{0xAAAA, 2, sec(1)});
  REQUIRE(root.ok());
  RootActions out;
  root->on_frame(7, Frame{0xBBBB, CheckIn{0, 2, 4, "x:1"}}, Nanos{0}, out);
  REQUIRE(out.size() == 2);
  const auto& send = std::get<RootSend>(out[0]);
  CHECK(send.link == 7);
  CHECK(send.frame.run_id == 0xBBBB);  // in the stranger's run id, so it reads the answer
  CHECK(std::get<Abort>(send.frame.message).reason == AbortReason::WrongRun);
  CHECK(std::holds_alternative<RootClose>(out[1]));
  CHECK(root->state() == RootState::Collecting);

  out.clear();
  root->on_frame(1, Frame{0xAAAA, CheckIn{0, 2, 4, "a:1"}}, Nanos{1}, out);
  root->on_frame(2, Frame{0xAAAA, CheckIn{1, 2, 4, "b:2"}}, Nanos{2}, out);
  CHECK(root->state() == RootState::Done);
  const auto& first = std::get<RootSend>(out[0]);
  CHECK(first.link == 1);
  CHECK(std::get<RingNeighbour>(first.frame.message) == RingNeighbour{1, 2, "b:2"});
}

TEST_CASE("a rank refuses a ring predecessor that is not its ring predecessor", "[bootstrap][ring]") {
  auto rank = BootstrapRank::create(RankConfig{1, 2, 4, "me:1", {9}, sec(1)});
  REQUIRE(rank.ok());
  RankActions out;
  rank->start(Nanos{0}, out);
  out.clear();
  rank->on_frame(RankLink::Prev, Frame{1, RingHello{0, 2}}, Nanos{1}, out);
  CHECK(rank->state() == RankState::Failed);
  const auto& done = std::get<RankFinished>(out.back());
  REQUIRE(done.error.has_value());
  CHECK_THAT(done.error->what, Contains("says it is rank 0 sending to rank 2, expected rank 1 sending to rank 2"));
  // The abort went to the root (the only other link it holds), not back to the predecessor.
  const auto& sent = std::get<RankSend>(out.front());
  CHECK(sent.link == RankLink::Root);
  CHECK(std::get<Abort>(sent.frame.message).reason == AbortReason::ProtocolError);
}

TEST_CASE("bad rank configurations are refused before anything is sent", "[bootstrap][config]") {
  CHECK_THAT(BootstrapRank::create(RankConfig{1, 4, 4, "a", {}, sec(1)}).error().what,
             Contains("rank 4 out of range for nranks=4"));
  CHECK_THAT(BootstrapRank::create(RankConfig{1, 0, 0, "a", {}, sec(1)}).error().what, Contains("nranks 0"));
  CHECK_THAT(
      BootstrapRank::create(RankConfig{1, 0, 1, "a", std::vector<std::uint8_t>(kMaxBlobSize + 1), sec(1)}).error().what,
      Contains("at most 65536"));
  CHECK_THAT(BootstrapRank::create(RankConfig{1, 0, 1, "bad\naddress", {}, sec(1)}).error().what,
             Contains("not printable"));
  CHECK_THAT(BootstrapRoot::create(RootConfig{1, 0, sec(1)}).error().what, Contains("nranks 0 out of range"));
}

}  // namespace railcheck::bootstrap
