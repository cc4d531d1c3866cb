#pragma once
// One scenario on the SimGrid driver and in the netns lab, side by side (issue 41): the loop
// `railcheck validate` runs, here so that the CLI only prints what it returns. Each lab run is
// bracketed by two calibrations of the lab link (just before it and just after it: the lab's rate
// follows a shared machine's load) and the sim predicts that run on their mean, with seed + i.
// The lab (two network namespaces joined by veth rails) is made here and taken down on return.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "backends/validate/side_by_side.hpp"
#include "models/scenario.hpp"

namespace railcheck::validation {

// Below the slowest rate an unshaped lab stream was seen to run on a 2-core VM (1.3 Gb/s, and
// 1.0 with both sides on one core), so the rail, not a core, sets the pace.
inline constexpr double kDefaultLabGbps = 1.0;
// tc's rate is in kbit/s: a lab rail below 1 Mb/s would round to a few kbit or none, and no lab
// stream finishes at that rate anyway. 0 (unshaped) stays allowed.
inline constexpr double kMinLabGbps = 0.001;

struct ValidateRequest {
  std::string provider = "tcp;ofi_rxm";
  std::uint32_t runs = 3;             // lab runs; each column is the median of its runs
  // Each rail of the lab shaped to this rate each way (conform::NetnsLab::limit_rate), so that the
  // lab stream is bound by its link as a NIC's is, not by this machine's CPU speed; 0 leaves the
  // veth pairs unshaped (the stream then runs at its receiver's CPU rate: docs/validation.md).
  double lab_gbps = kDefaultLabGbps;
  std::optional<std::uint64_t> seed;  // the sim's first seed; default the scenario's
  // One line per step ("run 2 of 3: calibrating the lab link ..."), for a progress display.
  std::function<void(const std::string&)> progress;
};

struct Validation {
  enum class Status : std::uint8_t {
    Compared,  // `answer` holds both drivers' figures (answer.agree() says whether they agree)
    Skipped,   // the scenario or this machine cannot run it in the lab; `why` says which (exit 77)
    BadInput,  // the scenario cannot be made into a lab scenario (exit 2)
    Failed,    // the lab could not be run or calibrated (exit 1)
  };
  Status status = Status::Compared;
  std::string why;
  SideBySide answer;
};

// The whole comparison. Never throws; every way it can stop is a Status with its reason.
Validation validate_scenario(const Scenario& sc, const ValidateRequest& request);

// Only the lab link's measurement (`railcheck validate --calibrate`): the simulator's [topology]
// keys for it (calibration.hpp topology_keys), or a Skipped / Failed status with its reason.
struct LinkKeys {
  Validation::Status status = Validation::Status::Compared;
  std::string why;
  std::string keys;
};
LinkKeys calibrate_lab_link(const Scenario& sc, const ValidateRequest& request);

}  // namespace railcheck::validation
