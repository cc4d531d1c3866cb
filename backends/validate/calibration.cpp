// Measuring the lab's link (calibration.hpp).
#include "backends/validate/calibration.hpp"

#include <fmt/format.h>
#include <time.h>

#include <algorithm>

#include "backends/validate/lab_scenario.hpp"

namespace railcheck::validation {
namespace {

Result<conform::LabFailoverResult> clean_run(const conform::NetnsLab& lab, const std::string& provider,
                                             std::size_t bytes, std::uint32_t window, std::uint64_t messages,
                                             const HaTunables& tunables) {
  conform::LabFailoverPlan p;
  p.provider = provider;
  p.spec.seed = 41;
  p.warmup = lab_warmup(window);
  p.spec.messages = messages + p.warmup;
  p.spec.fixed_size = bytes;
  p.spec.window = window;
  p.spec.max_group = 1;
  p.tunables = tunables;
  auto r = conform::run_lab_failover(lab, p);
  if (!r) return r.error();
  if (!r->ok() || r->measured() != messages || r->end_ns <= r->start_ns)
    return Error{
        fmt::format("calibration run ({} messages of {} B, window {}) failed: sender exit {}, receiver exit {}",
                    messages, bytes, window, r->sender_exit, r->receiver_exit),
        "see the sides' lines on stderr"};
  return r;
}

}  // namespace

Result<LabLink> calibrate(const conform::NetnsLab& lab, const std::string& provider, std::size_t bytes,
                          std::uint32_t window, const HaTunables& tunables) {
  LabLink link;
  link.shaped_gbps = lab.rate_limit_gbps();
  link.provider = provider;
  link.message_bytes = bytes;
  link.window = window;
  // The rate: long enough (a few thousand messages) that the first delivery's set-up is noise.
  auto rate = clean_run(lab, provider, bytes, window, 3000, tunables);
  if (!rate) return rate.error();
  link.gbps = static_cast<double>(rate->measured() - 1) * static_cast<double>(bytes) * 8.0 /
              static_cast<double>(rate->end_ns - rate->start_ns);
  link.landed_per_bin = rate->landed_per_bin;
  for (std::size_t b = 0; b < link.landed_per_bin.size(); ++b) {
    const long long from = rate->start_ns + static_cast<long long>(b) * conform::kLandedBin.count();
    link.shared_core_per_bin.push_back(rate->shared_core(from, from + conform::kLandedBin.count()));
  }
  // The round trip: one 64 B message at a time.
  auto rtt = clean_run(lab, provider, 64, 1, 200, tunables);
  if (!rtt) return rtt.error();
  link.round_trip = Nanos{(rtt->end_ns - rtt->start_ns) / static_cast<long long>(rtt->measured() - 1)};
  // The backend's idle-rail reads: once per coarse-clock tick (backends/hw/libfabric/coarse_clock.hpp).
  timespec tick{};
  if (clock_getres(CLOCK_MONOTONIC_COARSE, &tick) == 0)
    link.idle_rail_poll = Nanos{static_cast<std::int64_t>(tick.tv_sec) * 1'000'000'000 + tick.tv_nsec};
  // TCP's retransmission floor, as the lab's namespaces have it (a per-namespace sysctl since
  // Linux 6.11; older kernels: the compiled-in TCP_RTO_MIN, 200 ms).
  link.transport_rto = ms(200);
  if (auto v = conform::run_ip({"netns", "exec", lab.side(0).netns, "cat", "/proc/sys/net/ipv4/tcp_rto_min_us"}))
    try {
      link.transport_rto = Nanos{std::stoll(v.value()) * 1000};
    } catch (const std::exception&) {
    }
  // The neighbour (ARP) resolution retry, as the lab's namespaces have it.
  link.neighbour_retry = ms(1000);
  if (auto v = conform::run_ip(
          {"netns", "exec", lab.side(0).netns, "cat", "/proc/sys/net/ipv4/neigh/default/retrans_time_ms"}))
    try {
      link.neighbour_retry = ms(std::stoll(v.value()));
    } catch (const std::exception&) {
    }
  return link;
}

std::optional<std::pair<double, double>> window_rates(const LabLink& link, Nanos span) {
  const auto bin = std::chrono::duration_cast<Nanos>(conform::kLandedBin);
  const auto k = static_cast<std::size_t>(std::max<std::int64_t>(1, span / bin));
  // The last bin is cut short where the stream ended: left out.
  const std::size_t whole = link.landed_per_bin.empty() ? 0 : link.landed_per_bin.size() - 1;
  if (whole < k || link.message_bytes == 0) return std::nullopt;
  const double per_message =
      static_cast<double>(link.message_bytes) * 8.0 / (static_cast<double>(k) * static_cast<double>(bin.count()));
  std::uint64_t in_window = 0;
  for (std::size_t b = 0; b < k; ++b) in_window += link.landed_per_bin[b];
  std::uint64_t lo = in_window, hi = in_window;
  for (std::size_t b = k; b < whole; ++b) {
    in_window += link.landed_per_bin[b];
    in_window -= link.landed_per_bin[b - k];
    lo = std::min(lo, in_window);
    hi = std::max(hi, in_window);
  }
  return std::make_pair(static_cast<double>(lo) * per_message, static_cast<double>(hi) * per_message);
}

std::string topology_keys(const LabLink& link, const std::string& provider) {
  NicPreset nic;
  apply_lab_link(nic, link);
  std::string curve;
  const double per_bin =
      static_cast<double>(link.message_bytes) * 8.0 / static_cast<double>(conform::kLandedBin.count());
  for (std::size_t b = 0; b < link.landed_per_bin.size(); ++b)
    curve += fmt::format(" {:.2f}{}", link.landed_per_bin[b] * per_bin,
                         b < link.shared_core_per_bin.size() && link.shared_core_per_bin[b] > 0.5 ? "*" : "");
  double shared = 0;
  std::size_t known = 0;
  for (double b : link.shared_core_per_bin) {
    if (b < 0) continue;
    shared += b;
    ++known;
  }
  const std::string shared_text =
      known == 0 ? "not known" : fmt::format("{:.0f} %", 100 * shared / static_cast<double>(known));
  const std::string shape =
      curve.empty()
          ? std::string()
          : fmt::format(
                "# Gb/s per {} ms from the stream's start (*: both sides on one core; over the stream: {}):{}\n",
                conform::kLandedBin.count() / 1'000'000, shared_text, curve);
  return shape +
         fmt::format(
             "# The netns lab's link as railcheck validate --calibrate measured it: {} over veth{}, {} B messages,\n"
             "# window {}; a stream of {:.3f} Gb/s and a {:.1f} us round trip (docs/validation.md).\n"
             "[topology]\n"
             "host_gbps = {:.4f}\n"
             "link_gbps = {:.1f}\n"
             "link_latency_us = {:.2f}\n"
             "mtu = {}\n"
             "idle_rail_poll_ms = {:.3f}\n"
             "transport_rto_ms = {:.1f}\n",
             provider,
             link.shaped_gbps > 0 ? fmt::format(" shaped to {:g} Gb/s (tc tbf)", link.shaped_gbps) : std::string(),
             link.message_bytes, link.window, link.gbps, static_cast<double>(link.round_trip.count()) / 1e3,
             nic.host_gbps, nic.link_gbps, static_cast<double>(nic.link_latency.count()) / 1e3, nic.mtu,
             to_millis(nic.idle_rail_poll), to_millis(nic.transport_rto));
}

}  // namespace railcheck::validation
