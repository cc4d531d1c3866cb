#include "engine/budget/comm_budget.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

#include "engine/core/engine_assert.hpp"

namespace railcheck::budget {

std::string_view cq_layout_name(CqLayout l) { return l == CqLayout::Device ? "device" : "per-comm"; }

std::string_view resource_name(BudgetResource r) {
  switch (r) {
    case BudgetResource::Qp: return "max_qp";
    case BudgetResource::Cqe: return "max_cqe";
    case BudgetResource::Cq: return "max_cq";
    case BudgetResource::QpWr: return "max_qp_wr";
    case BudgetResource::Cap: return "cap";
  }
  return "?";
}

const ResourceLimit& CommBudget::limit(BudgetResource r) const {
  const auto it = std::find_if(limits.begin(), limits.end(), [r](const ResourceLimit& l) { return l.resource == r; });
  RAILCHECK_ASSERT(it != limits.end(), "compute_budget gives every resource but cap a limit row");
  return *it;
}

double CommBudget::headroom() const {
  if (max_comms == 0 || resource_comms == kUnbounded) return 0;
  return static_cast<double>(resource_comms) / static_cast<double>(max_comms);
}

namespace {

Result<bool> check_inputs(const BudgetCaps& caps, const BudgetUsage& u) {
  const std::pair<std::string_view, std::uint64_t> positive[] = {{"channels", u.channels},
                                                                 {"wr_per_conn", u.wr_per_conn},
                                                                 {"max_recvs", u.max_recvs},
                                                                 {"paths", u.paths},
                                                                 {"two_sided_qps_per_path", u.two_sided_qps_per_path},
                                                                 {"max_qp", caps.max_qp},
                                                                 {"max_cqe", caps.max_cqe},
                                                                 {"max_qp_wr", caps.max_qp_wr}};
  for (const auto& [name, v] : positive)
    if (v == 0)
      return Error{fmt::format("{} is 0", name),
                   "every usage count and the device's max_qp, max_cqe and max_qp_wr must be positive"};
  // Upper bounds far past any real NIC or NCCL setting, low enough that no product below can
  // wrap a uint64 (a per-connection CQE count of 2^64 - 1 + 1 would read as a small number).
  const std::tuple<std::string_view, std::uint64_t, std::uint64_t> bounded[] = {
      {"channels", u.channels, 1024},
      {"wr_per_conn", u.wr_per_conn, 1u << 20},
      {"max_recvs", u.max_recvs, 64},
      {"paths", u.paths, 16},
      {"two_sided_qps_per_path", u.two_sided_qps_per_path, 16},
      {"one_sided_qps_per_path", u.one_sided_qps_per_path, 16},
      {"max_qp", caps.max_qp, 1ull << 40},
      {"max_cqe", caps.max_cqe, 1ull << 40},
      {"max_qp_wr", caps.max_qp_wr, 1ull << 40},
      {"max_cq", caps.max_cq, 1ull << 40}};
  for (const auto& [name, v, hi] : bounded)
    if (v > hi) return Error{fmt::format("{} is {}, above {}", name, v, hi), "no device or NCCL setting comes near it"};
  return true;
}

std::uint64_t fit(std::uint64_t cap, std::uint64_t per_conn) { return per_conn == 0 ? kUnbounded : cap / per_conn; }

}  // namespace

Result<CommBudget> compute_budget(const BudgetCaps& caps, const BudgetUsage& u) {
  if (auto ok = check_inputs(caps, u); !ok) return ok.error();
  const std::uint64_t w = u.wr_per_conn;
  const std::uint64_t c = u.channels;
  const std::uint64_t qps_per_path = std::uint64_t{u.two_sided_qps_per_path} + u.one_sided_qps_per_path;

  CommBudget b;
  b.max_recvs = u.max_recvs;
  // Per comm and path (seed §15.2): each two-sided QP of the send side reserves wr x maxRecvs
  // CQEs, of the receive side wr (each QP's queue holds the full in-flight window: the plugin
  // cannot know which QP a WR will take); each one-sided QP reserves wr more for its writes.
  const std::uint64_t two = u.two_sided_qps_per_path;
  const std::uint64_t one = u.one_sided_qps_per_path;
  b.send_cqes = two * w * u.max_recvs + one * w;
  b.recv_cqes = two * w + one * w;
  b.qps_per_conn = 2 * c * u.paths * qps_per_path;

  b.limits.push_back(
      ResourceLimit{.resource = BudgetResource::Qp,
                    .cap = caps.max_qp,
                    .per_conn = b.qps_per_conn,
                    .conns = fit(caps.max_qp, b.qps_per_conn),
                    .note = fmt::format("2 comms x {} channels x {} paths x {} QPs", c, u.paths, qps_per_path)});

  if (u.cq_layout == CqLayout::Device) {
    const std::uint64_t per_conn = c * u.paths * (b.send_cqes + b.recv_cqes);
    b.limits.push_back(
        ResourceLimit{.resource = BudgetResource::Cqe,
                      .cap = caps.max_cqe,
                      .per_conn = per_conn,
                      .conns = fit(caps.max_cqe, per_conn),
                      .note = fmt::format("{} channels x {} paths x ({} send + {} recv), one CQ per device", c, u.paths,
                                          b.send_cqes, b.recv_cqes)});
    b.limits.push_back(ResourceLimit{.resource = BudgetResource::Cq,
                                     .cap = caps.max_cq,
                                     .per_conn = 0,
                                     .conns = kUnbounded,
                                     .checked = caps.max_cq != 0,
                                     .note = "one CQ per device, created once"});
  } else {
    // Each CQ must hold its own comm's demand; the count of comms is then bounded by max_cq.
    const std::uint64_t deepest = std::max(b.send_cqes, b.recv_cqes);
    b.cqs_per_conn = 2 * c * u.paths;
    b.limits.push_back(ResourceLimit{.resource = BudgetResource::Cqe,
                                     .cap = caps.max_cqe,
                                     .per_conn = deepest,
                                     .conns = deepest <= caps.max_cqe ? kUnbounded : 0,
                                     .note = "per CQ: the deepest comm's demand"});
    b.limits.push_back(ResourceLimit{.resource = BudgetResource::Cq,
                                     .cap = caps.max_cq,
                                     .per_conn = b.cqs_per_conn,
                                     .conns = caps.max_cq == 0 ? kUnbounded : fit(caps.max_cq, b.cqs_per_conn),
                                     .checked = caps.max_cq != 0,
                                     .note = fmt::format("2 comms x {} channels x {} paths", c, u.paths)});
  }

  // A queue deeper than max_qp_wr cannot be created at all: no connection fits.
  const std::uint64_t deepest_queue = std::max(w * u.max_recvs, w);
  b.limits.push_back(ResourceLimit{.resource = BudgetResource::QpWr,
                                   .cap = caps.max_qp_wr,
                                   .per_conn = deepest_queue,
                                   .conns = deepest_queue <= caps.max_qp_wr ? kUnbounded : 0,
                                   .note = fmt::format("per queue: send queue {} x {}", w, u.max_recvs)});

  // Ties go to the first resource in this order: a queue that cannot be created at all is named
  // before the counts it also zeroes.
  b.resource_comms = kUnbounded;
  b.binding = BudgetResource::Qp;
  for (const BudgetResource r : {BudgetResource::QpWr, BudgetResource::Qp, BudgetResource::Cqe, BudgetResource::Cq})
    if (const ResourceLimit& l = b.limit(r); l.checked && l.conns < b.resource_comms) {
      b.resource_comms = l.conns;
      b.binding = l.resource;
    }
  b.max_comms = b.resource_comms;
  if (u.comms_cap != 0 && u.comms_cap < b.max_comms) {
    b.max_comms = u.comms_cap;
    b.binding = BudgetResource::Cap;
  }

  b.seed.qp_limit = caps.max_qp / (2 * c);
  b.seed.cqe_limit = caps.max_cqe / ((w * u.max_recvs + w) * 2 * c);
  b.seed.max_comms = std::min({b.seed.qp_limit, b.seed.cqe_limit, std::uint64_t{256}});
  // The verdict: never more comms than the binding resource or the cap allows, and the binding
  // resource is one whose limit is that count (or the cap).
  RAILCHECK_ASSERT(b.max_comms <= b.resource_comms && (u.comms_cap == 0 || b.max_comms <= u.comms_cap),
                   "maxComms is the smaller of what the resources allow and the cap");
  RAILCHECK_ASSERT(b.binding == BudgetResource::Cap
                       ? b.max_comms == u.comms_cap
                       : b.limit(b.binding).conns == b.resource_comms || b.resource_comms == kUnbounded,
                   "the binding resource is the one that sets maxComms");
  RAILCHECK_ASSERT(b.qps_per_conn > 0 && b.send_cqes >= b.recv_cqes,
                   "every comm takes QPs, and a send side reserves at least a receive side's CQEs (maxRecvs >= 1)");
  return b;
}

}  // namespace railcheck::budget
