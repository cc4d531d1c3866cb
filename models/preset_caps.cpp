#include "models/preset_caps.hpp"

namespace railcheck::budget {

BudgetCaps caps_from_preset(const NicPreset& nic) {
  return BudgetCaps{.max_qp = nic.max_qp,
                    .max_cqe = nic.max_cqe,
                    .max_qp_wr = nic.max_qp_wr,
                    .max_cq = 0,
                    .source = "preset " + nic.name};
}

BudgetUsage usage_from_tunables(const HaTunables& t, std::uint32_t paths) {
  BudgetUsage u;
  u.channels = t.expected_channels;
  u.wr_per_conn = t.wr_per_conn;
  u.max_recvs = t.max_recvs;
  u.paths = paths;
  return u;
}

}  // namespace railcheck::budget
