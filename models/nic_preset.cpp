#include "models/nic_preset.hpp"

#include <array>

namespace railcheck {
namespace {

// ConnectX-7 limits as `ibv_devinfo -v` reports them for mlx5 devices (max_qp 131072..262144,
// max_qp_wr 32768, max_sge 30, max_cqe 4194303). EFA limits are approximate: EFA exposes far
// fewer QPs and a shallower send queue than mlx5 (efadv_query_device reports max_sq_wr in the
// hundreds to low thousands); the figures below are conservative placeholders to be replaced
// by `railcheck` reading a real device (hardware-backend issue).
const std::array<NicPreset, 4> kPresets = {
    NicPreset{"cx7-400g", "NVIDIA ConnectX-7, 1x400 Gb/s per GPU, RC (ordered)", 400, us(1), 4096, 131072, 4194303,
              32768, 30, true},
    NicPreset{"efa-100g", "AWS EFA (p4d), 100 Gb/s per NIC, 4 per GPU, SRD (unordered); limits approximate", 100, us(5),
              8928, 256, 32768, 4096, 2, false},
    NicPreset{"efa-200g", "AWS EFA (p5), 200 Gb/s per NIC, 2 per GPU, SRD (unordered); limits approximate", 200, us(5),
              8928, 256, 32768, 4096, 2, false},
    NicPreset{"test-10g", "small 10 Gb/s NIC with tiny limits, for fast tests", 10, us(2), 4096, 64, 4096, 256, 4,
              true},
};

}  // namespace

std::span<const NicPreset> nic_presets() { return kPresets; }

std::optional<NicPreset> find_nic_preset(std::string_view name) {
  for (const auto& p : kPresets)
    if (p.name == name) return p;
  return std::nullopt;
}

}  // namespace railcheck
