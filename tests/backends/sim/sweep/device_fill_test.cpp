#include "backends/sim/sweep/device_fill.hpp"

#include <fmt/format.h>

#include <catch2/catch.hpp>

#include "models/preset_caps.hpp"

using namespace railcheck;
using namespace railcheck::budget;
using railcheck::sweep::fill_device;

TEST_CASE("device fill: the seed's defaults fill a ConnectX-7's shared CQ after 227 connections", "[sweep][budget]") {
  auto f = fill_device(caps_from_preset(*find_nic_preset("cx7-400g")), BudgetUsage{});
  REQUIRE(f);
  CHECK(f->connections == 227);
  CHECK(f->refusal.resource == BudgetResource::Cqe);
  CHECK(f->cqs == 1);
}

TEST_CASE("device fill: EFA with one CQ per comm and a one-sided QP per path runs out of QPs", "[sweep][budget]") {
  BudgetUsage u;
  u.cq_layout = CqLayout::PerComm;
  u.one_sided_qps_per_path = 1;
  auto f = fill_device(caps_from_preset(*find_nic_preset("efa-100g")), u);
  REQUIRE(f);
  CHECK(f->connections == 2);  // 128 QPs each; max_qp 256
  CHECK(f->qps == 256);
  CHECK(f->refusal.resource == BudgetResource::Qp);
}

// The formula and the allocations are counted independently; they must agree everywhere.
TEST_CASE("device fill: opened connections equal the budget's resource limit over a grid", "[sweep][budget]") {
#ifdef RAILCHECK_SANITIZE
  const std::vector<std::string> presets = {"efa-100g", "test-10g"};
#else
  const std::vector<std::string> presets = {"cx7-400g", "efa-100g", "test-10g"};
#endif
  int cells = 0;
  for (const auto& name : presets)
    for (std::uint32_t channels : {1U, 4U, 16U})
      for (std::uint32_t wr : {8U, 32U, 128U})
        for (std::uint32_t recvs : {1U, 4U, 8U})
          for (CqLayout layout : {CqLayout::Device, CqLayout::PerComm})
            for (const auto& [two_sided, one_sided] : {std::pair{1U, 0U}, std::pair{1U, 1U}, std::pair{2U, 0U}}) {
              BudgetCaps caps = caps_from_preset(*find_nic_preset(name));
              if (layout == CqLayout::PerComm) caps.max_cq = 300;
              BudgetUsage u;
              u.channels = channels;
              u.wr_per_conn = wr;
              u.max_recvs = recvs;
              u.cq_layout = layout;
              u.two_sided_qps_per_path = two_sided;
              u.one_sided_qps_per_path = one_sided;
              auto b = compute_budget(caps, u);
              auto f = fill_device(caps, u);
              REQUIRE(b);
              REQUIRE(f);
              INFO(fmt::format("{} channels {} wr {} recvs {} layout {} two-sided {} one-sided {}", name, channels, wr,
                               recvs, cq_layout_name(layout), two_sided, one_sided));
              CHECK(f->connections == b->resource_comms);
              ++cells;
            }
  CHECK(cells == static_cast<int>(presets.size()) * 162);
}

TEST_CASE("device fill: a device too large to open one QP at a time is refused as input", "[sweep][budget]") {
  BudgetCaps caps = caps_from_preset(*find_nic_preset("cx7-400g"));
  caps.max_qp = sweep::kMaxModeledQps + 1;
  auto f = fill_device(caps, BudgetUsage{});
  REQUIRE_FALSE(f);
  CHECK(f.error().what.find("max_qp") != std::string::npos);
}
