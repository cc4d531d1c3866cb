// The sim's answer beside the lab's (side_by_side.hpp).
#include "backends/validate/side_by_side.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

namespace railcheck::validation {
namespace {

using Lab = conform::LabFailoverResult;

std::optional<double> sim_ms_after_fault(const sim::RunSummary& s, const std::optional<Nanos>& at) {
  if (!at || !s.fault_at) return std::nullopt;
  return to_millis(*at - *s.fault_at);
}

std::optional<double> lab_ms_after_fault(const Lab& r, long long at_ns) {
  if (at_ns < 0 || r.fault_ns < 0) return std::nullopt;
  return static_cast<double>(at_ns - r.fault_ns) / 1e6;
}

// The sim's outcome names (sim::RunOutcome) where the lab's run means the same: every message
// verified ("delivered"), the sender's engine reporting the connection failed with nothing wrong
// delivered ("connection-failed"), the sender stalled with no error ("hung"). Anything else is a
// broken run and says how.
std::string lab_outcome(const Lab& r) {
  if (r.failed_cleanly()) return "connection-failed";
  if (r.hung && r.receiver_exit != 13) return "hung";
  if (!r.ok()) return fmt::format("failed (sender exit {}, receiver exit {})", r.sender_exit, r.receiver_exit);
  return r.verified == r.messages ? "delivered" : "incomplete";
}

// A run whose figures mean something: a whole stream, or one the engine ended cleanly.
bool measured(const Lab& r) { return r.ok() || r.failed_cleanly(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

enum class Kind { Time, Goodput, Count, Messages };

}  // namespace

bool SideBySide::agree() const {
  if (sim_outcome != hardware_outcome) return false;
  return std::all_of(rows.begin(), rows.end(), [](const Row& r) { return r.agree; });
}

SideBySide compare(const std::string& scenario, const std::vector<sim::RunSummary>& sims, std::uint64_t message_bytes,
                   const std::vector<Lab>& lab, const Tolerance& tol) {
  SideBySide out;
  out.scenario = scenario;
  auto tally = [](const std::map<std::string, int>& outcomes, std::size_t n) {
    if (outcomes.size() == 1) return outcomes.begin()->first;
    std::string text;
    for (const auto& [o, k] : outcomes) text += fmt::format("{}{} ({} of {})", text.empty() ? "" : ", ", o, k, n);
    return text;
  };
  std::map<std::string, int> sim_outcomes, lab_outcomes;
  for (const auto& s : sims)
    ++sim_outcomes[s.outcome == sim::RunOutcome::Delivered ? "delivered" : std::string(to_string(s.outcome))];
  for (const auto& r : lab) ++lab_outcomes[lab_outcome(r)];
  out.sim_outcome = tally(sim_outcomes, sims.size());
  out.hardware_outcome = tally(lab_outcomes, lab.size());
  if (sims.empty()) return out;
  const sim::RunSummary& sim = sims.front();  // what every prediction shares: whether there is an outage

  const bool benign = sim.fault_at == std::nullopt;  // no outage: every failover is a false one
  auto add = [&](std::string metric, Kind kind, const std::function<std::optional<double>(const sim::RunSummary&)>& s,
                 const std::function<std::optional<double>(const Lab&)>& h) {
    Row row;
    row.metric = std::move(metric);
    for (const auto& one : sims)
      if (auto v = s(one)) row.sim_runs.push_back(*v);
    if (!row.sim_runs.empty()) row.sim = median(row.sim_runs);
    for (const auto& r : lab)
      if (measured(r))
        if (auto v = h(r)) row.hardware_runs.push_back(*v);
    if (!row.hardware_runs.empty()) row.hardware = median(row.hardware_runs);
    // Run i's prediction was made from the calibration taken just before lab run i: the pairs
    // share the machine's load, so the judged difference is the median of the pairs' differences
    // (a load that drifts between runs moves both sides of a pair, not the difference).
    std::vector<double> excess, scale;  // lab - sim per pair; the larger of the two
    for (std::size_t i = 0; i < std::min(sims.size(), lab.size()); ++i) {
      if (!measured(lab[i])) continue;
      const auto a = s(sims[i]);
      const auto b = h(lab[i]);
      if (!a || !b) continue;
      double e = *b - *a;
      // A lab time after the fault is known only to within the call that made the fault (the
      // parent's nft or kill, side b's link ioctl: fault_window_ns): the lab's figure may be that
      // much longer. A lab
      // early by less than that window is not early; a late one gets no allowance.
      if (kind == Kind::Time && e < 0) e = std::min(0.0, e + static_cast<double>(lab[i].fault_window_ns()) / 1e6);
      excess.push_back(e);
      scale.push_back(std::max(std::abs(*a), std::abs(*b)));
    }
    if (row.sim && row.hardware) {
      if (excess.empty()) {  // no pair: the medians themselves
        excess.push_back(*row.hardware - *row.sim);
        scale.push_back(std::max(std::abs(*row.sim), std::abs(*row.hardware)));
      }
      const double diff = std::abs(median(excess)), size = median(scale);
      std::vector<double> relative;
      for (std::size_t i = 0; i < excess.size(); ++i) relative.push_back(scale[i] > 0 ? excess[i] / scale[i] : 0);
      switch (kind) {
        case Kind::Time: row.agree = diff <= std::max(tol.time_floor_ms, tol.time_ratio * size); break;
        case Kind::Goodput: row.agree = std::abs(median(relative)) <= tol.goodput_ratio; break;
        case Kind::Messages: row.agree = diff <= std::max(tol.messages_floor, tol.goodput_ratio * size); break;
        case Kind::Count:
          row.agree = std::all_of(excess.begin(), excess.end(), [](double d) { return d == 0; }) &&
                      *row.sim == *row.hardware;
          break;
      }
    } else {
      row.agree = row.sim.has_value() == row.hardware.has_value();  // both absent: agree; one absent: not
    }
    out.rows.push_back(std::move(row));
  };
  // Times after an outage, and the goodput either side of it, exist only where there is one.
  const bool outage = sim.fault_at.has_value();
  if (outage) {
    add("detection_ms", Kind::Time, [](const sim::RunSummary& x) { return sim_ms_after_fault(x, x.detected_at); },
        [](const Lab& r) { return lab_ms_after_fault(r, r.detected_ns); });
    add("first_replayed_delivery_ms", Kind::Time,
        [](const sim::RunSummary& x) { return sim_ms_after_fault(x, x.flowing_at); },
        [](const Lab& r) { return lab_ms_after_fault(r, r.first_replayed_ns); });
  }
  // No outage, but a failover on either driver (a false one): when the detector gave up on the
  // rail, after the disturbance began (a delay spike, a loss, a stall). v-delay-big's agreement
  // is in the time too: the lab 19.6 ms, the sim 19.3-19.8 (docs/validation.md).
  const bool any_failover =
      std::any_of(sims.begin(), sims.end(), [](const sim::RunSummary& x) { return x.failovers > 0; }) ||
      std::any_of(lab.begin(), lab.end(), [](const Lab& r) { return r.failovers > 0; });
  if (!outage && any_failover) {
    add("false_failover_ms", Kind::Time,
        [](const sim::RunSummary& x) -> std::optional<double> {
          if (!x.detected_at || !x.disturbance_at) return std::nullopt;
          return to_millis(*x.detected_at - *x.disturbance_at);
        },
        [](const Lab& r) { return lab_ms_after_fault(r, r.detected_ns); });
  }
  // A connection the engine ended (every path down): when the caller heard, and how much got
  // through after the fault. Lost is then the stream's untransferred rest, a rate times a time;
  // what came through after the fault is judged instead (Tolerance::messages_floor).
  const bool ended = sim.outcome == sim::RunOutcome::ConnectionFailed ||
                     std::any_of(lab.begin(), lab.end(), [](const Lab& r) { return r.failed_cleanly(); });
  if (ended) {
    add("error_reported_ms", Kind::Time, [](const sim::RunSummary& x) { return sim_ms_after_fault(x, x.failed_at); },
        [](const Lab& r) { return lab_ms_after_fault(r, r.error_ns); });
  }
  add("failovers", Kind::Count, [](const sim::RunSummary& x) { return std::optional<double>(x.failovers); },
      [](const Lab& r) { return static_cast<double>(r.failovers); });
  add("false_failovers", Kind::Count, [](const sim::RunSummary& x) { return std::optional<double>(x.false_failovers); },
      [benign](const Lab& r) {
    // Before the fault could have taken effect: the start of the call that made it.
    const bool early = r.detected_ns >= 0 && r.fault_ns >= 0 && r.detected_ns < r.fault_ns - r.fault_window_ns();
    return static_cast<double>(benign ? r.failovers : (early ? 1 : 0));
  });
  if (ended)
    add("delivered_after_fault", Kind::Messages,
        [](const sim::RunSummary& x) { return std::optional<double>(x.delivered_after_fault); },
        [](const Lab& r) {
          return r.fault_ns < 0 ? std::nullopt
                                : std::optional<double>(r.verified - std::min(r.verified, r.warmup + r.verified_at_fault));
        });
  else
    add("lost", Kind::Count, [](const sim::RunSummary& x) { return std::optional<double>(x.lost); },
        [](const Lab& r) { return static_cast<double>(r.messages - r.verified); });  // warm-up included on both counts
  // The lab's receiver fails its run on a duplicate or misplaced message (message_stream.hpp):
  // a run that completed had none.
  add("duplicated", Kind::Count,
      [](const sim::RunSummary& x) { return std::optional<double>(x.duplicates + x.misplaced); },
      [](const Lab&) { return std::optional<double>(0.0); });
  // The whole stream's payload rate, first delivery to last, outage included (a stream the engine
  // ended has no whole: its rate before the fault is the one below).
  if (!ended)
  add("goodput_gbps", Kind::Goodput,
      [message_bytes](const sim::RunSummary& x) {
        const double stream_s = to_millis(x.end_time) / 1e3;
        return stream_s > 0 ? std::optional<double>(static_cast<double>(x.messages_delivered) *
                                                    static_cast<double>(message_bytes) * 8.0 / stream_s / 1e9)
                            : std::nullopt;
      },
      [message_bytes](const Lab& r) {
        return r.end_ns > r.start_ns
                   ? std::optional<double>(static_cast<double>(r.measured()) * static_cast<double>(message_bytes) * 8.0 /
                                           static_cast<double>(r.end_ns - r.start_ns))
                   : std::nullopt;
      });
  if (outage) {
    add("goodput_before_gbps", Kind::Goodput,
        [](const sim::RunSummary& x) { return std::optional<double>(x.gbps_before_fault); },
        [](const Lab& r) { return r.fault_ns >= 0 ? std::optional<double>(r.gbps_before) : std::nullopt; });
    if (!ended)
    add("goodput_after_gbps", Kind::Goodput,
        [](const sim::RunSummary& x) {
          // Both from the first delivery after the switch (the lab's first_replayed_ns): a switch
          // onto a dead standby waits its control timeout before anything flows.
          return x.flowing_at ? std::optional<double>(x.gbps_after_flowing) : std::nullopt;
        },
        [](const Lab& r) { return r.first_replayed_ns >= 0 ? std::optional<double>(r.gbps_after) : std::nullopt; });
  }
  for (std::size_t i = 0; i < lab.size(); ++i) {
    const Lab& r = lab[i];
    if (r.fault_ns < 0) continue;
    auto near_fault = [&](const conform::LabSideReport& side) {
      std::string text;
      for (const auto& [at, d] : side.stalls)
        if (at + d >= r.fault_ns && at < r.fault_ns + 100'000'000)
          text += fmt::format("{}{:.1f} ms at {:+.1f} ms", text.empty() ? "" : ", ", static_cast<double>(d) / 1e6,
                              static_cast<double>(at - r.fault_ns) / 1e6);
      return text.empty() ? std::string("none") : text;
    };
    out.lab_notes.push_back(
        fmt::format("run {}: calls of 1 ms or more within 100 ms of the fault: sender {}; receiver {}", i + 1,
                    near_fault(r.sender), near_fault(r.receiver)));
    // Long calls after that: a side blocked inside the provider for tens of ms halts the stream
    // (a rail's return shows one, docs/validation.md), which the rate after the switch shows.
    auto later = [&](const conform::LabSideReport& side) {
      std::string text;
      for (const auto& [at, d] : side.stalls)
        if (d >= 10'000'000 && at >= r.fault_ns + 100'000'000)
          text += fmt::format("{}{:.1f} ms at {:+.1f} ms", text.empty() ? "" : ", ", static_cast<double>(d) / 1e6,
                              static_cast<double>(at - r.fault_ns) / 1e6);
      return text;
    };
    if (const std::string s = later(r.sender), rcv = later(r.receiver); !s.empty() || !rcv.empty())
      out.lab_notes.push_back(fmt::format("run {}: calls of 10 ms or more later: sender {}; receiver {}", i + 1,
                                          s.empty() ? "none" : s, rcv.empty() ? "none" : rcv));
    if (r.fault_window_ns() > 0)
      out.lab_notes.push_back(fmt::format(
          "run {}: the fault took effect within the {:.2f} ms the call to make it took (its end is the fault's "
          "instant): a lab time after it up to that much shorter than the sim's is not judged early",
          i + 1, static_cast<double>(r.fault_window_ns()) / 1e6));
    std::string curve;
    const double per_bin = static_cast<double>(message_bytes) * 8.0 / static_cast<double>(conform::kLandedBin.count());
    const long long bins_before = (r.fault_ns - r.start_ns) / conform::kLandedBin.count();
    for (std::size_t b = 0; b < r.landed_per_bin.size() && static_cast<long long>(b) < bins_before; ++b) {
      const long long from = r.start_ns + static_cast<long long>(b) * conform::kLandedBin.count();
      curve += fmt::format(" {:.2f}{}", r.landed_per_bin[b] * per_bin,
                           r.shared_core(from, from + conform::kLandedBin.count()) > 0.5 ? "*" : "");
    }
    out.lab_notes.push_back(
        fmt::format("run {}: Gb/s per {} ms from the stream's start to the fault (*: both sides on one core):{}", i + 1,
                    conform::kLandedBin.count() / 1'000'000, curve.empty() ? " -" : curve));
    // And after the switch, the span goodput_after covers (its first 400 ms): where a rate after a
    // failover differs, this shows whether it is a level or the dips of something recurring.
    if (r.first_replayed_ns > r.start_ns && r.start_ns >= 0) {
      std::string after;
      const auto first = static_cast<std::size_t>((r.first_replayed_ns - r.start_ns) / conform::kLandedBin.count() + 1);
      constexpr std::size_t kAfterBins = 80;
      for (std::size_t b = first; b < r.landed_per_bin.size() && b < first + kAfterBins; ++b)
        after += fmt::format(" {:.2f}", r.landed_per_bin[b] * per_bin);
      if (!after.empty())
        out.lab_notes.push_back(fmt::format("run {}: Gb/s per {} ms after the first replayed delivery:{}", i + 1,
                                            conform::kLandedBin.count() / 1'000'000, after));
    }
  }
  // Rows the sim has no figure for where there was no fault (a clean run has no detection).
  for (auto& row : out.rows)
    if (!row.sim && !row.hardware) row.agree = true;
  return out;
}

std::string to_text(const SideBySide& s) {
  auto cell = [](const std::optional<double>& v) { return v ? fmt::format("{:.3f}", *v) : std::string("-"); };
  std::string out = fmt::format("scenario   {}\n", s.scenario);
  for (const auto& c : s.changes) out += fmt::format("  lab: {}\n", c);
  if (!s.machine.empty()) out += fmt::format("  machine: {}\n", s.machine);
  out += fmt::format("{:<28} {:>12} {:>12} {:>10}  {}\n", "", "sim", "hardware", "diff", "");
  out += fmt::format("{:<28} {:>12} {:>12} {:>10}  {}\n", "outcome", s.sim_outcome, s.hardware_outcome, "",
                     s.sim_outcome == s.hardware_outcome ? "agree" : "DISAGREE");
  for (const auto& r : s.rows) {
    const std::string diff = r.sim && r.hardware ? fmt::format("{:+.3f}", *r.hardware - *r.sim) : "";
    auto range = [](const char* side, const std::vector<double>& v) {
      if (v.size() < 2) return std::string();
      auto [lo, hi] = std::minmax_element(v.begin(), v.end());
      return *lo == *hi ? std::string() : fmt::format(" {} {:.3f}..{:.3f}", side, *lo, *hi);
    };
    std::string runs = range("sim", r.sim_runs) + range("lab", r.hardware_runs);
    if (!runs.empty()) runs = fmt::format("  ({} over {} runs)", runs.substr(1), std::max(r.sim_runs.size(), r.hardware_runs.size()));
    out += fmt::format("{:<28} {:>12} {:>12} {:>10}  {}{}\n", r.metric, cell(r.sim), cell(r.hardware), diff,
                       r.agree ? "agree" : "DISAGREE", runs);
  }
  for (const auto& n : s.lab_notes) out += fmt::format("  lab {}\n", n);
  out += s.agree() ? "verdict    the drivers agree within the tolerance\n"
                   : "verdict    the drivers DISAGREE beyond the tolerance (rows marked)\n";
  return out;
}

nlohmann::json to_json(const SideBySide& s) {
  nlohmann::json rows = nlohmann::json::array();
  auto num = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  for (const auto& r : s.rows)
    rows.push_back({{"metric", r.metric},
                    {"sim", num(r.sim)},
                    {"hardware", num(r.hardware)},
                    {"sim_runs", r.sim_runs},
                    {"hardware_runs", r.hardware_runs},
                    {"agree", r.agree}});
  return {{"scenario", s.scenario}, {"outcome", {{"sim", s.sim_outcome}, {"hardware", s.hardware_outcome}}},
          {"rows", rows},           {"changes", s.changes},
          {"machine", s.machine},   {"lab_notes", s.lab_notes},
          {"agree", s.agree()}};
}

}  // namespace railcheck::validation
