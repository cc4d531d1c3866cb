#include "backends/hw/verbs/qp_transition.hpp"

#include <catch2/catch.hpp>

using namespace railcheck;
using namespace railcheck::hw::verbs;

namespace {
ModifyQp to(QpState s) {
  ModifyQp m;
  m.target = s;
  return m;
}
QpEndpoint peer() {
  QpEndpoint e;
  e.qpn = 0x1234;
  e.psn = 0xabcdef;
  e.lid = 7;
  e.gid[10] = 0xff;
  e.gid[11] = 0xff;
  e.gid[15] = 9;
  return e;
}
}  // namespace

TEST_CASE("RESET to INIT sets port, pkey and remote access, nothing else", "[verbs][qp]") {
  LocalPortContext port;
  port.port_num = 2;
  port.pkey_index = 3;
  auto t = qp_transition(QpState::Reset, to(QpState::Init), port);
  REQUIRE(t.ok());
  CHECK(t->mask == (IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS));
  CHECK(t->attr.qp_state == IBV_QPS_INIT);
  CHECK(t->attr.port_num == 2);
  CHECK(t->attr.pkey_index == 3);
  CHECK(t->attr.qp_access_flags == (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ));
}

TEST_CASE("INIT to RTR on InfiniBand addresses the peer by LID with the engine's RNR timer", "[verbs][qp]") {
  LocalPortContext port;
  port.path_mtu = IBV_MTU_2048;
  ModifyQp m = to(QpState::Rtr);
  m.remote = peer();
  QpReliability rel;
  rel.min_rnr_timer = 5;
  m.reliability = rel;
  auto t = qp_transition(QpState::Init, m, port);
  REQUIRE(t.ok());
  CHECK(t->mask == (IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER));
  CHECK(t->attr.dest_qp_num == 0x1234);
  CHECK(t->attr.rq_psn == 0xabcdef);
  CHECK(t->attr.path_mtu == IBV_MTU_2048);
  CHECK(t->attr.min_rnr_timer == 5);
  CHECK(t->attr.ah_attr.dlid == 7);
  CHECK(t->attr.ah_attr.is_global == 0);
  CHECK((t->mask & IBV_QP_ALT_PATH) == 0);  // never arm hardware APM (seed §16.5)
}

TEST_CASE("INIT to RTR on RoCE carries a GRH to the peer's GID and no LID", "[verbs][qp]") {
  LocalPortContext port;
  port.ethernet = true;
  port.sgid_index = 3;
  ModifyQp m = to(QpState::Rtr);
  m.remote = peer();
  auto t = qp_transition(QpState::Init, m, port);
  REQUIRE(t.ok());
  CHECK(t->attr.ah_attr.is_global == 1);
  CHECK(t->attr.ah_attr.dlid == 0);
  CHECK(t->attr.ah_attr.grh.sgid_index == 3);
  CHECK(t->attr.ah_attr.grh.dgid.raw[15] == 9);
  CHECK(t->attr.ah_attr.grh.dgid.raw[10] == 0xff);
}

TEST_CASE("RTR to RTS writes the hardware retry window and our first PSN", "[verbs][qp]") {
  LocalPortContext port;
  port.local_psn = 0x123456;
  ModifyQp m = to(QpState::Rts);
  QpReliability rel;
  rel.timeout = 14;
  rel.retry_cnt = 3;
  rel.rnr_retry = 7;
  m.reliability = rel;
  auto t = qp_transition(QpState::Rtr, m, port);
  REQUIRE(t.ok());
  CHECK(t->mask ==
        (IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC));
  CHECK(t->attr.timeout == 14);
  CHECK(t->attr.retry_cnt == 3);
  CHECK(t->attr.rnr_retry == 7);
  CHECK(t->attr.sq_psn == 0x123456);
}

TEST_CASE("RTS to RTS may change only the RNR timer", "[verbs][qp]") {
  ModifyQp m = to(QpState::Rts);
  QpReliability rel;
  rel.timeout = 20;
  rel.min_rnr_timer = 9;
  m.reliability = rel;
  auto t = qp_transition(QpState::Rts, m, LocalPortContext{});
  REQUIRE(t.ok());
  CHECK(t->mask == (IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER));
  CHECK(t->attr.min_rnr_timer == 9);
}

TEST_CASE("ERR and RESET are reachable from every state with the state bit alone", "[verbs][qp]") {
  for (QpState from : {QpState::Reset, QpState::Init, QpState::Rtr, QpState::Rts, QpState::Err}) {
    for (QpState target : {QpState::Err, QpState::Reset}) {
      auto t = qp_transition(from, to(target), LocalPortContext{});
      REQUIRE(t.ok());
      CHECK(t->mask == IBV_QP_STATE);
      CHECK(t->attr.qp_state == to_ibv(target));
    }
  }
}

TEST_CASE("transitions the IB state machine forbids are errors that name both states", "[verbs][qp]") {
  auto skip = qp_transition(QpState::Reset, to(QpState::Rts), LocalPortContext{});
  REQUIRE_FALSE(skip.ok());
  CHECK_THAT(skip.error().what, Catch::Contains("RESET") && Catch::Contains("RTS"));
  CHECK_FALSE(qp_transition(QpState::Rts, to(QpState::Init), LocalPortContext{}).ok());
  CHECK_FALSE(qp_transition(QpState::Err, to(QpState::Rtr), LocalPortContext{}).ok());
  CHECK_FALSE(qp_transition(QpState::Rts, to(QpState::Sqd), LocalPortContext{}).ok());
  auto no_peer = qp_transition(QpState::Init, to(QpState::Rtr), LocalPortContext{});
  REQUIRE_FALSE(no_peer.ok());
  CHECK_THAT(no_peer.error().what, Catch::Contains("peer"));
}
