#include "engine/imm/qp_split.hpp"

#include <catch2/catch.hpp>

#include "engine/core/rng.hpp"
#include "engine/imm/imm_replay.hpp"

using namespace railcheck;
using namespace railcheck::imm;

namespace {

// Library and application RECVs posted interleaved, then SENDs and WRITE_IMMs arriving in a
// random order; counts RECVs of the wrong owner consumed.
int misroutes(QpLayout layout, std::uint64_t seed) {
  SeededRng rng(seed);
  VerbsReceiver rx(layout);
  for (std::uint64_t i = 0; i < 16; ++i) rx.post_recv({rng.below(2) ? RecvOwner::Application : RecvOwner::Library, i});
  int bad = 0;
  for (int i = 0; i < 8; ++i) {
    auto m = rx.deliver(rng.below(2) ? Opcode::Send : Opcode::WriteImm);
    if (m.ok() && m->misrouted) ++bad;
  }
  return bad;
}

}  // namespace

TEST_CASE("on one shared QP a WRITE_IMM consumes the application's RECV posted ahead of it") {
  VerbsReceiver rx(QpLayout::Shared);
  rx.post_recv({RecvOwner::Application, 1});
  rx.post_recv({RecvOwner::Library, 2});
  auto m = rx.deliver(Opcode::WriteImm);
  REQUIRE(m.ok());
  CHECK(m->misrouted);
  CHECK(m->recv.wr_id == 1);
}

TEST_CASE("with the two-QP split no WRITE_IMM ever eats an application RECV") {
  int shared_bad = 0;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    INFO("seed " << seed);
    CHECK(misroutes(QpLayout::Split, seed) == 0);
    shared_bad += misroutes(QpLayout::Shared, seed);
  }
  CHECK(shared_bad > 0);  // the same streams do misroute on a shared QP
}

TEST_CASE("a WRITE_IMM with no library RECV posted is an RNR error, not an application RECV") {
  VerbsReceiver rx(QpLayout::Split);
  rx.post_recv({RecvOwner::Application, 1});
  CHECK_FALSE(rx.deliver(Opcode::WriteImm).ok());
  CHECK(rx.deliver(Opcode::Send).ok());
}

TEST_CASE("replay sets: naive re-posts what lost its ACK, probe and resync only what had not landed") {
  const std::vector<WriteFate> fates = {WriteFate::Acked, WriteFate::AckLost, WriteFate::Lost,
                                        WriteFate::LateOnDeadPath};
  CHECK(writes_to_replay(ReplayPolicy::Naive, fates) == std::vector<std::uint32_t>{1, 2, 3});
  CHECK(writes_to_replay(ReplayPolicy::Probe, fates) == std::vector<std::uint32_t>{2, 3});
  CHECK(writes_to_replay(ReplayPolicy::Resync, fates) == std::vector<std::uint32_t>{2, 3});
  DuplicateFilter resync(ReplayPolicy::Resync, 4), probe(ReplayPolicy::Probe, 4);
  CHECK(resync.admit(3));
  CHECK_FALSE(resync.admit(3));
  CHECK(probe.admit(3));
  CHECK(probe.admit(3));
}
