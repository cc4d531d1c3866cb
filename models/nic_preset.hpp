#pragma once
// NIC capability presets: link speed and the resource limits that bound maxComms (seed §15.2).
// Numbers come from `ibv_devinfo -v` / `efadv_query_device` output of real devices; each
// preset cites where its figures come from in nic_preset.cpp.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "engine/core/time.hpp"

namespace railcheck {

struct NicPreset {
  std::string name;  // e.g. "cx7-400g"
  std::string description;
  double link_gbps = 400;    // per port, line rate in Gb/s
  Nanos link_latency{};      // one hop NIC -> switch (the switch adds another hop)
  std::uint32_t mtu = 4096;  // bytes
  std::uint32_t max_qp = 0;
  std::uint32_t max_cqe = 0;
  std::uint32_t max_qp_wr = 0;
  std::uint32_t max_sge = 0;
  bool ordered = true;  // RC (in order per QP) vs SRD (reliable, unordered)
  // How late the driver reads a rail it treats as idle (nothing of this end in flight there: no
  // send awaiting completion, no receive posted): what lands there (a resync request, its answer,
  // a heartbeat) waits for the next read. 0 = at once, as the
  // presets of real NICs model a driver that polls every CQ. The libfabric backend reads an idle
  // rail's CQ every 1024 progress() calls and at least once per coarse-clock tick
  // (backends/hw/libfabric/fabric_executor.cpp kIdlePollEvery); `railcheck validate` sets it to
  // the lab's tick (docs/validation.md). The sim delivers such a message at the next tick, on a grid
  // every process shares (the kernel's coarse clock), its phase drawn from the run's seed.
  Nanos idle_rail_poll{};
  // The host's work per message, as a rate: 0 = the host never limits (the NIC presets: an HCA
  // takes WQEs as fast as the wire drains them). Otherwise each QP's sends are prepared one after
  // another at this rate before they reach the wire, as a proxy thread feeding one TCP stream
  // does: `railcheck validate` sets it to the lab stream's calibrated rate (docs/validation.md).
  double host_gbps = 0;
  // The transport's own retransmission, where it is not the RC QP's (local ACK timeout
  // 4.096 us x 2^qp_timeout, qp_retry_cnt tries, then an error): 0 = the QP's. Otherwise a lost
  // packet goes again `transport_rto` after it was sent, twice that after the next loss, and so
  // on, never giving up: TCP as Linux runs it (TCP_RTO_MIN 200 ms bounds the timeout of a
  // low-latency connection; tcp_retries2 = 15 is about 15 minutes). `railcheck validate` sets it
  // for the lab's tcp;ofi_rxm link, whose engine tunables qp_timeout and qp_retry_cnt reach no QP.
  Nanos transport_rto{};
};

std::span<const NicPreset> nic_presets();
std::optional<NicPreset> find_nic_preset(std::string_view name);
// "cx7-400g, efa-100g, ...": the preset names, for error messages that say what would work.
std::string nic_preset_names();

}  // namespace railcheck
