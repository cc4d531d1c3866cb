#include "backends/sim/routing/moe_fluid.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <vector>

namespace railcheck::sim {
namespace {

// SimGrid 3.32's precision settings, at their defaults (src/kernel/lmm/System.cpp).
constexpr double kMaxminPrecision = 1e-5;  // maxmin/precision
constexpr double kSurfPrecision = 1e-9;    // surf/precision: events this close happen together

// SimGrid's double_update: subtract, and snap what is left under `precision` to zero.
void double_update(double& v, double minus, double precision) {
  v -= minus;
  if (v < precision) v = 0.0;
}

enum class FlowState : std::uint8_t { Waiting, Latency, Active, Landed };

struct FluidFlow {
  std::uint32_t link[2];  // sender's link up, receiver's link down
  std::uint32_t to;
  std::uint8_t stage;
  double penalty;  // the route's latency: CM02's sharing penalty, and what it pays first
  FlowState state = FlowState::Waiting;
  double remains = 0;  // bytes
  double last_update = 0;
  double last_value = 0;  // the rate its remains were last advanced with
  std::uint32_t slot[2];  // its index in each link's list of active flows
};

struct FluidLink {
  double bound = 0;
  std::vector<std::uint32_t> active;  // flows sharing it now
  std::vector<std::uint32_t> other;   // other[k]: the other link of flow active[k]
  // SimGrid sums 1/penalty over a link's flows one by one; every flow of a link has the same
  // penalty (a link carries one route kind), so that sum depends only on how many flows share
  // it: usage_of[n] is it for n flows, the same bits, without a pass over the flows per solve.
  const std::vector<double>* usage_of = nullptr;
  bool up = false;         // a sender's link: every flow on it has it as link[0]
  double penalty = 0;      // of every flow sharing it
  std::uint32_t mark = 0;  // == FluidPhase::round_: in this round's connected set
};

class FluidPhase {
 public:
  FluidPhase(const routing::MoePhase& phase, std::uint32_t ranks, const FabricParams& f, std::uint64_t token_bytes)
      : links_(4 * static_cast<std::size_t>(ranks)), stage0_into_(ranks, 0), stage1_from_(ranks) {
    const double nic = f.nic_gbps_per_gpu * 1e9 / 8.0;  // as GpuFabric builds its links
    const double nvl = f.nvlink_gbytes_s * 1e9;
    const double nic_lat = to_seconds(f.nic_latency), nvl_lat = to_seconds(f.nvlink_latency);
    for (std::uint32_t g = 0; g < ranks; ++g) {
      links_[g].bound = links_[ranks + g].bound = nic;
      links_[2 * ranks + g].bound = links_[3 * ranks + g].bound = nvl;
      links_[g].up = links_[2 * ranks + g].up = true;
      links_[g].penalty = links_[ranks + g].penalty = nic_lat + nic_lat;
      links_[2 * ranks + g].penalty = links_[3 * ranks + g].penalty = nvl_lat + nvl_lat;
      links_[g].usage_of = links_[ranks + g].usage_of = &nic_usage_;
      links_[2 * ranks + g].usage_of = links_[3 * ranks + g].usage_of = &nvl_usage_;
    }
    nic_penalty_ = nic_lat + nic_lat;
    nvl_penalty_ = nvl_lat + nvl_lat;
    flows_.reserve(phase.messages.size());
    for (const routing::MoeMessage& m : phase.messages) {
      const bool nvlink = m.from / f.gpus_per_node == m.to / f.gpus_per_node;  // GpuFabric::route
      const std::uint32_t base = nvlink ? 2 * ranks : 0;
      const double lat = nvlink ? nvl_lat : nic_lat;
      FluidFlow fl{{base + m.from, base + ranks + m.to}, m.to, m.stage, lat + lat};
      ++kind_flows_[nvlink ? 1 : 0];
      fl.remains = static_cast<double>(m.tokens * token_bytes);
      if (m.stage == 0) ++stage0_into_[m.to];
      if (m.stage == 1) stage1_from_[m.from].push_back(static_cast<std::uint32_t>(flows_.size()));
      flows_.push_back(fl);
    }
    value_.assign(flows_.size(), 0.0);
    date_.assign(flows_.size(), 0.0);
    remaining_.assign(links_.size(), 0.0);
    usage_.assign(links_.size(), 0.0);
    light_.assign(links_.size(), 0);
    fill_usage(nic_usage_, nic_penalty_, kind_flows_[0]);
    fill_usage(nvl_usage_, nvl_penalty_, kind_flows_[1]);
  }

  double run(double t0) {
    now_ = t0;
    for (std::uint32_t i = 0; i < flows_.size(); ++i)
      if (flows_[i].stage == 0) start(i);
    for (std::uint32_t r = 0; r < stage0_into_.size(); ++r)
      if (stage0_into_[r] == 0) release(r);
    std::size_t landed = 0;
    while (landed < flows_.size()) {
      solve();
      const std::vector<std::uint32_t> due = advance();
      for (std::uint32_t i : due) {
        touch(flows_[i]);
        if (flows_[i].state == FlowState::Latency) {
          enable(i);
        } else {
          land(i);
          ++landed;
        }
      }
      // The driver hears of the landings at this instant and sends what they release.
      for (std::uint32_t i : due)
        if (flows_[i].state == FlowState::Landed && flows_[i].stage == 0 && --stage0_into_[flows_[i].to] == 0)
          release(flows_[i].to);
    }
    return now_ - t0;
  }

 private:
  // A message leaves now: its latency first, outside the sharing.
  void start(std::uint32_t i) {
    FluidFlow& fl = flows_[i];
    fl.state = FlowState::Latency;
    fl.last_update = now_;
    date_[i] = fl.penalty + now_;  // SimGrid: latency_ + get_last_update()
    pending_.push_back(i);
    touch(fl);  // SimGrid marks a new flow's links modified even before it shares them
  }

  // The clock moves to the next date, as SimGrid's engine moves it; everything due within
  // surf/precision of it happens now (latencies end, messages land) and is handed back.
  std::vector<std::uint32_t> advance() {
    double next = std::numeric_limits<double>::infinity();
    for (std::uint32_t i : pending_) next = std::min(next, date_[i]);
    assert(next < std::numeric_limits<double>::infinity());
    now_ = now_ + (next - now_);
    std::vector<std::uint32_t> due;
    for (std::size_t k = 0; k < pending_.size();) {
      if (std::fabs(date_[pending_[k]] - now_) < kSurfPrecision) {
        due.push_back(pending_[k]);
        pending_[k] = pending_.back();
        pending_.pop_back();
      } else {
        ++k;
      }
    }
    return due;
  }

  // Its latency paid, a message joins the sharing; it gets its landing date at the next solve.
  void enable(std::uint32_t i) {
    FluidFlow& fl = flows_[i];
    fl.state = FlowState::Active;
    fl.last_update = now_;
    date_[i] = std::numeric_limits<double>::infinity();
    join(i);
    pending_.push_back(i);
  }

  void release(std::uint32_t rank) {
    for (std::uint32_t i : stage1_from_[rank]) start(i);
  }

  void join(std::uint32_t i) {
    FluidFlow& fl = flows_[i];
    for (int k = 0; k < 2; ++k) {
      FluidLink& link = links_[fl.link[k]];
      if (link.active.empty()) ++busy_links_;
      fl.slot[k] = static_cast<std::uint32_t>(link.active.size());
      link.active.push_back(i);
      link.other.push_back(fl.link[1 - k]);
    }
  }

  // usage[n]: n flows of `penalty` summed one by one from 0, as SimGrid's saturation loop does.
  static void fill_usage(std::vector<double>& usage, double penalty, std::size_t flows) {
    usage.assign(1, 0.0);
    for (std::size_t n = 1; n <= flows; ++n) usage.push_back(usage.back() + 1.0 / penalty);
  }

  void land(std::uint32_t i) {
    FluidFlow& fl = flows_[i];
    fl.state = FlowState::Landed;
    for (int k = 0; k < 2; ++k) {
      FluidLink& link = links_[fl.link[k]];
      auto& a = link.active;
      const std::uint32_t moved = a.back();
      a[fl.slot[k]] = moved;
      link.other[fl.slot[k]] = link.other.back();
      FluidFlow& m = flows_[moved];
      m.slot[m.link[0] == fl.link[k] ? 0 : 1] = fl.slot[k];
      a.pop_back();
      link.other.pop_back();
      if (a.empty()) --busy_links_;
    }
  }

  void touch(const FluidFlow& fl) {
    touched_.push_back(fl.link[0]);
    touched_.push_back(fl.link[1]);
  }

  // SimGrid's lazy solve: the links connected to a change (through flows sharing them) and
  // their flows, saturated by maxmin_solve's loop; then each such flow's remaining bytes advance
  // at its previous rate and it gets a new landing date at its new one.
  void solve() {
    if (touched_.empty()) return;
    ++round_;
    std::vector<std::uint32_t>& set_links = set_links_;
    std::vector<std::uint32_t>& set_flows = set_flows_;
    set_links.clear();
    set_flows.clear();
    busy_seen_ = 0;
    for (std::uint32_t l : touched_) visit(l, set_links);
    // Breadth-first over links sharing a flow. Once every link that carries a flow is in the set
    // (the usual case: one landing connects a flat phase's every NIC link), nothing is left to
    // find, so the scan stops instead of reading every flow of every link once more.
    for (std::size_t k = 0; k < set_links.size() && busy_seen_ < busy_links_; ++k)
      for (std::uint32_t l : links_[set_links[k]].other) visit(l, set_links);
    touched_.clear();
    for (std::uint32_t l : set_links)  // each flow once: at its sender's link
      if (links_[l].up) set_flows.insert(set_flows.end(), links_[l].active.begin(), links_[l].active.end());
    saturate(set_links, set_flows);
    for (std::uint32_t i : set_flows) {
      FluidFlow& fl = flows_[i];
      if (fl.remains > 0)
        double_update(fl.remains, fl.last_value * (now_ - fl.last_update), kMaxminPrecision * kSurfPrecision);
      fl.last_update = now_;
      fl.last_value = value_[i];
      // Nothing left (within SimGrid's 1e-14 bytes): it lands now, at the next event.
      date_[i] = fl.remains > 0 ? now_ + fl.remains / value_[i] : now_;
    }
  }

  void visit(std::uint32_t l, std::vector<std::uint32_t>& set_links) {
    if (links_[l].mark == round_) return;
    links_[l].mark = round_;
    set_links.push_back(l);
    if (!links_[l].active.empty()) ++busy_seen_;
  }

  // maxmin_solve (src/kernel/lmm/maxmin.cpp) on these links and flows. A flow's links carry
  // only flows of its own route kind, so every flow of a link has the same penalty and the
  // values one round fixes on a link are all equal: the order SimGrid visits them in changes no
  // bit of the result.
  // The hot state lives in arrays of its own (value_, and each link's remaining_, usage_,
  // light_): a round reads them for every light link and every flow it fixes.
  void saturate(const std::vector<std::uint32_t>& set_links, const std::vector<std::uint32_t>& set_flows) {
    for (std::uint32_t i : set_flows) value_[i] = -1;  // not fixed yet
    std::vector<std::uint32_t>& light = light_list_;
    light.clear();
    for (std::uint32_t l : set_links) {
      const FluidLink& k = links_[l];
      remaining_[l] = k.bound;
      usage_[l] = (*k.usage_of)[k.active.size()];
      light_[l] = usage_[l] > 0;
      if (light_[l]) light.push_back(l);
    }
    std::vector<std::uint32_t>& saturated = saturated_;
    while (!light.empty()) {
      double min_usage = -1;
      saturated.clear();
      for (std::uint32_t l : light) {
        const double r = remaining_[l] / usage_[l];
        if (min_usage < 0 || min_usage > r) {
          min_usage = r;
          saturated.assign(1, l);
        } else if (min_usage == r) {
          saturated.push_back(l);
        }
      }
      for (std::uint32_t l : saturated) {
        const FluidLink& sat = links_[l];
        // Every flow of the link has its penalty: one value and one usage step for them all.
        // The TCP-gamma bound (gamma / 2 latency) sits far above every share here: not binding.
        const double value = min_usage / sat.penalty, step = 1.0 / sat.penalty;
        for (std::size_t j = 0; j < sat.active.size(); ++j) {
          const std::uint32_t i = sat.active[j];
          if (value_[i] >= 0) continue;
          value_[i] = value;
          // Its two links (this one and the other): each takes the same decrements in any order.
          for (const std::uint32_t m : {l, sat.other[j]}) {
            if (!light_[m]) continue;
            const double bound = links_[m].bound;
            double_update(remaining_[m], value, bound * kMaxminPrecision);
            double_update(usage_[m], step, kMaxminPrecision);
            if (!(usage_[m] > kMaxminPrecision) || !(remaining_[m] > bound * kMaxminPrecision)) light_[m] = 0;
          }
        }
      }
      light.erase(std::remove_if(light.begin(), light.end(), [this](std::uint32_t l) { return !light_[l]; }),
                  light.end());
    }
  }

  std::vector<FluidFlow> flows_;
  std::vector<double> value_;  // per flow: the rate the last solve gave it
  std::vector<double> date_;   // per flow: its latency ends (Latency), it lands at its rate (Active)
  // Per link, SimGrid's Constraint::remaining_, usage_ and light-table entry in the saturation loop.
  std::vector<double> remaining_, usage_;
  std::vector<std::uint8_t> light_;
  std::vector<FluidLink> links_;
  std::vector<std::uint32_t> stage0_into_;               // stage-0 messages still due per rank
  std::vector<std::vector<std::uint32_t>> stage1_from_;  // per rank
  std::vector<std::uint32_t> pending_;                   // flows in their latency or sharing
  std::vector<std::uint32_t> touched_;                   // links changed since the last solve
  std::uint32_t round_ = 0;
  double now_ = 0;
  double nic_penalty_ = 0, nvl_penalty_ = 0;
  std::size_t kind_flows_[2] = {0, 0};         // flows over the NICs, over NVLink
  std::vector<double> nic_usage_, nvl_usage_;  // FluidLink::usage_of
  std::size_t busy_links_ = 0;                 // links with at least one flow sharing them
  std::size_t busy_seen_ = 0;                  // of those, in this solve's set so far
  std::vector<std::uint32_t> set_links_, set_flows_, light_list_, saturated_;  // reused per solve
};

}  // namespace

double fluid_moe_phase(const routing::MoePhase& phase, std::uint32_t ranks, const FabricParams& fabric,
                       std::uint64_t token_bytes, double t0) {
  if (phase.messages.empty()) return 0;
  return FluidPhase(phase, ranks, fabric, token_bytes).run(t0);
}

}  // namespace railcheck::sim
