#include "models/nic_preset.hpp"

#include <array>
#include <utility>

namespace railcheck {
namespace {

// Where the figures come from.
//
// cx7-400g: mlx5 devices report max_qp 131072 (262144 with some firmware profiles; we take the
//   lower), max_qp_wr 32768, max_sge 30 and max_cqe 4194303 in `ibv_devinfo -v` — see the
//   outputs quoted in ofiwg/libfabric#8256 and #9940 and openucx/ucx#8229 and #10317. Those are
//   ConnectX-5/6 and Connect-IB; the mlx5 driver reports the same limits for ConnectX-7, but we
//   found no ConnectX-7 output in public material to quote. MTU 4096 is the largest IB MTU.
//   1 us per hop is the usual order of an IB NIC plus cable to a switch port.
// efa-*: the device limits come from the EFA device that UCX's tests emulate (openucx/ucx,
//   2025: vendor 0x1d0f, part 0xefa1; max_qp 256, max_qp_wr 4096, max_sge 2, max_cqe 32768,
//   port max_msg_sz 8928) and agree with max_sq_wr = 4096 measured on p5.48xlarge
//   (kvcache-ai/Mooncake#3296, which also reports 2048 on p6-b300). Treat them as approximate:
//   they vary by EFA generation and driver, and nothing here was read from a real device. The
//   8928-byte MTU is EFA's largest SRD message (libfabric's fi_efa(7): "approximately 8 KiB").
//   The 5 us per hop is a rough figure chosen so a small message takes ~10 us one way, the
//   order reported for EFA; it is not measured. SRD is reliable but does not keep order.
// test-10g: made up, small on purpose, so budget limits and queue stalls show up in tiny runs.
// The two EFA generations share every device limit; only the rate differs.
NicPreset efa(std::string name, std::string description, double gbps) {
  return NicPreset{.name = std::move(name),
                   .description = std::move(description),
                   .link_gbps = gbps,
                   .link_latency = us(5),
                   .mtu = 8928,
                   .max_qp = 256,
                   .max_cqe = 32768,
                   .max_qp_wr = 4096,
                   .max_sge = 2,
                   .ordered = false};
}

const std::array kPresets = {
    NicPreset{.name = "cx7-400g",
              .description = "NVIDIA ConnectX-7, 1x400 Gb/s per GPU, RC (reliable, in order)",
              .link_gbps = 400,
              .link_latency = us(1),
              .mtu = 4096,
              .max_qp = 131072,
              .max_cqe = 4194303,
              .max_qp_wr = 32768,
              .max_sge = 30,
              .ordered = true},
    efa("efa-100g",
        "AWS EFA, 100 Gb/s per device (p4d: 4 per node; p5: 4 per GPU), SRD (reliable, unordered); limits "
        "approximate",
        100),
    efa("efa-200g", "AWS EFA, 200 Gb/s per device (p5en: 2 per GPU), SRD (reliable, unordered); limits approximate",
        200),
    NicPreset{.name = "test-10g",
              .description = "small 10 Gb/s RC NIC with tiny limits, for fast tests",
              .link_gbps = 10,
              .link_latency = us(2),
              .mtu = 4096,
              .max_qp = 64,
              .max_cqe = 4096,
              .max_qp_wr = 256,
              .max_sge = 4,
              .ordered = true},
};

}  // namespace

std::span<const NicPreset> nic_presets() { return kPresets; }

std::optional<NicPreset> find_nic_preset(std::string_view name) {
  for (const auto& p : kPresets)
    if (p.name == name) return p;
  return std::nullopt;
}

std::string nic_preset_names() {
  std::string out;
  for (const auto& p : nic_presets()) out += (out.empty() ? "" : ", ") + p.name;
  return out;
}

}  // namespace railcheck
