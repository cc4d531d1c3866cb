#include "engine/budget/comm_budget.hpp"

#include <catch2/catch.hpp>

#include "models/preset_caps.hpp"

using namespace railcheck;
using namespace railcheck::budget;

TEST_CASE("budget: the seed's defaults on a ConnectX-7 are bound by the shared CQ's entries", "[budget]") {
  auto b = compute_budget(caps_from_preset(*find_nic_preset("cx7-400g")), BudgetUsage{});
  REQUIRE(b);
  // 16 channels x 2 paths x (64 x 8 + 64) = 18432 CQEs per connection; 4194303 / 18432 = 227.
  CHECK(b->limit(BudgetResource::Cqe).per_conn == 18432);
  CHECK(b->max_comms == 227);
  CHECK(b->binding == BudgetResource::Cqe);
  // 2 comms x 16 channels x 2 paths = 64 QPs per connection.
  CHECK(b->limit(BudgetResource::Qp).conns == 131072 / 64);
  CHECK(b->seed.qp_limit == 131072 / 32);
  CHECK(b->seed.cqe_limit == 227);
  CHECK(b->seed.max_comms == 227);
  CHECK(b->max_recvs == 8);
  CHECK_FALSE(b->limit(BudgetResource::Cq).checked);
}

TEST_CASE("budget: hand-computed limits, and the seed's QP term counting one comm where two are made", "[budget]") {
  const BudgetCaps caps{.max_qp = 1000, .max_cqe = 100000, .max_qp_wr = 1024, .max_cq = 0, .source = "test"};
  BudgetUsage u;
  u.channels = 2;
  u.wr_per_conn = 10;
  u.max_recvs = 4;
  auto b = compute_budget(caps, u);
  REQUIRE(b);
  CHECK(b->qps_per_conn == 8);  // 2 comms x 2 channels x 2 paths
  CHECK(b->limit(BudgetResource::Qp).conns == 125);
  CHECK(b->limit(BudgetResource::Cqe).per_conn == 2 * 2 * (40 + 10));
  CHECK(b->limit(BudgetResource::Cqe).conns == 500);
  CHECK(b->max_comms == 125);
  CHECK(b->binding == BudgetResource::Qp);
  CHECK(b->seed.qp_limit == 250);
  CHECK(b->seed.max_comms == 250);  // twice what the device holds

  u.one_sided_qps_per_path = 1;
  b = compute_budget(caps, u);
  REQUIRE(b);
  CHECK(b->limit(BudgetResource::Qp).conns == 62);  // 16 QPs per connection
  CHECK(b->send_cqes == 50);                        // 10 x 4 + 10 for the one-sided QP
  CHECK(b->recv_cqes == 20);
}

TEST_CASE("budget: the cap binds only below every resource, and headroom says by how much", "[budget]") {
  BudgetUsage u;
  u.cq_layout = CqLayout::PerComm;
  auto b = compute_budget(caps_from_preset(*find_nic_preset("cx7-400g")), u);
  REQUIRE(b);
  // One CQ per comm and path: each needs only 512 entries, so QPs bind at 2048, above the cap.
  CHECK(b->limit(BudgetResource::Cqe).conns == kUnbounded);
  CHECK(b->resource_comms == 2048);
  CHECK(b->max_comms == 256);
  CHECK(b->binding == BudgetResource::Cap);
  CHECK(b->headroom() == Approx(8.0));

  u.comms_cap = 0;
  b = compute_budget(caps_from_preset(*find_nic_preset("cx7-400g")), u);
  REQUIRE(b);
  CHECK(b->max_comms == 2048);
  CHECK(b->binding == BudgetResource::Qp);
}

TEST_CASE("budget: per-comm CQs are bounded by max_cq when it is known", "[budget]") {
  BudgetCaps caps{.max_qp = 100000, .max_cqe = 4096, .max_qp_wr = 4096, .max_cq = 100, .source = "test"};
  BudgetUsage u;
  u.channels = 4;
  u.cq_layout = CqLayout::PerComm;
  auto b = compute_budget(caps, u);
  REQUIRE(b);
  CHECK(b->cqs_per_conn == 16);  // 2 comms x 4 channels x 2 paths
  CHECK(b->max_comms == 6);
  CHECK(b->binding == BudgetResource::Cq);

  caps.max_cqe = 511;  // the send comm's CQ needs 64 x 8 = 512
  b = compute_budget(caps, u);
  REQUIRE(b);
  CHECK(b->max_comms == 0);
  CHECK(b->binding == BudgetResource::Cqe);
}

TEST_CASE("budget: a send queue deeper than max_qp_wr allows no connection at all", "[budget]") {
  // test-10g: max_qp_wr 256 < 64 WRs x maxRecvs 8. The seed's formula does not look at it.
  auto b = compute_budget(caps_from_preset(*find_nic_preset("test-10g")), BudgetUsage{});
  REQUIRE(b);
  CHECK(b->max_comms == 0);
  CHECK(b->binding == BudgetResource::QpWr);
  CHECK(b->limit(BudgetResource::QpWr).per_conn == 512);
}

TEST_CASE("budget: zero counts are errors that name the field", "[budget]") {
  BudgetUsage u;
  u.channels = 0;
  auto b = compute_budget(caps_from_preset(*find_nic_preset("cx7-400g")), u);
  REQUIRE_FALSE(b);
  CHECK(b.error().what.find("channels") != std::string::npos);
  BudgetCaps caps = caps_from_preset(*find_nic_preset("cx7-400g"));
  caps.max_cqe = 0;
  b = compute_budget(caps, BudgetUsage{});
  REQUIRE_FALSE(b);
  CHECK(b.error().what.find("max_cqe") != std::string::npos);
}

TEST_CASE("budget: usage follows the HA tunables", "[budget]") {
  HaTunables t;
  t.expected_channels = 8;
  t.wr_per_conn = 32;
  t.max_recvs = 4;
  const BudgetUsage u = usage_from_tunables(t, 3);
  CHECK(u.channels == 8);
  CHECK(u.wr_per_conn == 32);
  CHECK(u.max_recvs == 4);
  CHECK(u.paths == 3);
}
