#pragma once
// What the lab's link is, measured with the provider in between (issue 41 item 2), so that the
// SimGrid driver can model it: the payload rate of one stream of the lab's message size and
// window, and the round trip of a 64 B message (window 1: each send waits for its completion,
// which under the engine's delivery acks is the receiver's acknowledgement). Both come from
// fault-free lab runs of the same engine and provider that validation then faults; and the
// coarse-clock tick that paces the backend's reads of an idle rail (LabLink::idle_rail_poll).
#include <optional>
#include <utility>

#include "backends/hw/conform/netns_lab.hpp"
#include "backends/validate/lab_scenario.hpp"
#include "engine/core/result.hpp"

namespace railcheck::validation {

// `bytes` and `window`: the stream validation will run; `tunables`: the scenario's engine.
Result<LabLink> calibrate(const conform::NetnsLab& lab, const std::string& provider, std::size_t bytes,
                          std::uint32_t window, const HaTunables& tunables);

// The lowest and highest rate (Gb/s) of calibration's stream over any `span` of whole bins of it
// (LabLink::landed_per_bin, sliding by one bin; at least one bin): how far the lab's own rate moves
// over a span as long as the one a goodput figure is taken over, with no fault in it. Nothing
// where the stream was shorter than `span`.
std::optional<std::pair<double, double>> window_rates(const LabLink& link, Nanos span);

// The simulator's parameters for `link` as a scenario's [topology] keys (docs/scenarios.md), with
// a comment line saying what was measured, where and when: `railcheck validate --calibrate`.
std::string topology_keys(const LabLink& link, const std::string& provider);

}  // namespace railcheck::validation
