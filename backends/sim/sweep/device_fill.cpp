#include "backends/sim/sweep/device_fill.hpp"

#include <fmt/format.h>

#include <optional>

namespace railcheck::sweep {
namespace {

using budget::CqLayout;

// One comm on one path: its CQ (PerComm) and QPs. Returns the refusal, if any.
std::optional<HcaRefusal> open_comm_path(ModeledHca& hca, const budget::BudgetUsage& u, std::uint32_t device_cq,
                                         bool send_side) {
  const std::uint64_t w = u.wr_per_conn;
  const std::uint64_t two_sided_cqes = send_side ? w * u.max_recvs : w;
  std::uint32_t cq = device_cq;
  if (u.cq_layout == CqLayout::PerComm) {
    auto made = hca.create_cq(two_sided_cqes * u.two_sided_qps_per_path + w * u.one_sided_qps_per_path);
    if (auto* r = std::get_if<HcaRefusal>(&made)) return *r;
    cq = std::get<std::uint32_t>(made);
  }
  for (std::uint32_t q = 0; q < u.two_sided_qps_per_path; ++q) {
    auto made = send_side ? hca.create_qp(cq, two_sided_cqes, 0, two_sided_cqes) : hca.create_qp(cq, 0, w, w);
    if (auto* r = std::get_if<HcaRefusal>(&made)) return *r;
  }
  for (std::uint32_t q = 0; q < u.one_sided_qps_per_path; ++q) {
    auto made = hca.create_qp(cq, w, 0, w);
    if (auto* r = std::get_if<HcaRefusal>(&made)) return *r;
  }
  return std::nullopt;
}

}  // namespace

Result<DeviceFill> fill_device(const budget::BudgetCaps& caps, const budget::BudgetUsage& u) {
  // compute_budget checks the same inputs; the study compares the two, so they must agree on
  // what is valid.
  if (auto b = budget::compute_budget(caps, u); !b) return b.error();
  if (caps.max_qp > kMaxModeledQps)
    return Error{fmt::format("max_qp {} is too many to open one by one (at most {})", caps.max_qp, kMaxModeledQps),
                 "the formula alone (without --open) handles any size"};
  ModeledHca hca(caps);
  std::uint32_t device_cq = 0;
  DeviceFill fill;
  if (u.cq_layout == CqLayout::Device) {
    auto made = hca.create_cq(caps.max_cqe);
    if (auto* r = std::get_if<HcaRefusal>(&made)) {
      fill.refusal = *r;
      return fill;
    }
    device_cq = std::get<std::uint32_t>(made);
  }
  for (;;) {
    for (std::uint32_t ch = 0; ch < u.channels; ++ch)
      for (const bool send_side : {true, false})
        for (std::uint32_t p = 0; p < u.paths; ++p)
          if (auto refused = open_comm_path(hca, u, device_cq, send_side)) {
            fill.refusal = *refused;
            fill.qps = hca.qps();
            fill.cqs = hca.cqs();
            return fill;
          }
    ++fill.connections;
  }
}

}  // namespace railcheck::sweep
