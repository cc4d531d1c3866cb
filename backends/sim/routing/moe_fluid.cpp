#include "backends/sim/routing/moe_fluid.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "backends/sim/routing/bipartite_sharing.hpp"
#include "engine/core/engine_assert.hpp"

namespace railcheck::sim {
namespace {

constexpr double kSurfPrecision = 1e-9;  // SimGrid's surf/precision: events this close happen together
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

enum class FlowState : std::uint8_t { Waiting, Latency, Active, Landed };

struct FluidFlow {
  std::uint32_t link[2];   // sender's link up, receiver's link down (FluidPhase::links_)
  std::uint32_t group;     // the sharing it joins: its links' connected set
  std::uint32_t up, down;  // its links' indices in that sharing
  std::uint32_t to;
  std::uint8_t stage;
  FlowState state = FlowState::Waiting;
  double penalty;  // the route's latency: what it pays first
  // Bytes left when it last joined a link's landings (all of them before that).
  double bytes = 0;
  // Active and solved: the link whose landings hold it, and that link's integral at which it lands.
  std::uint32_t bottleneck = kNone;
  double landing = 0;
  std::uint32_t pair_next = kNone, pair_prev = kNone;  // the other flows of its (up, down) pair
};

// A message whose latency ends at `date`.
struct LatencyEnd {
  double date;
  std::uint32_t flow;
  bool operator>(const LatencyEnd& o) const { return date != o.date ? date > o.date : flow > o.flow; }
};

// A flow waiting to land on its bottleneck link, keyed by the link's integral at which it lands.
struct Landing {
  double integral;
  std::uint32_t flow, version;
  bool operator>(const Landing& o) const { return integral != o.integral ? integral > o.integral : flow > o.flow; }
};

// A link as SimGrid's lazy update sees it: every flow it is the bottleneck of runs at its level,
// so one integral of the level (compensated: it grows to megabytes while a flow's bytes are
// thousands) replaces advancing each flow's remaining bytes; a flow lands when the integral
// reaches its key.
struct LinkClock {
  double level = 0;
  double since = 0;                // when the level and integral were last brought up to date
  double integral = 0, carry = 0;  // the integral of the level to `since`, and its rounding
  std::vector<Landing> landings;   // a min-heap
  // The key of its first live landing (kInf: none), unless `recheck`: a flow may have left the
  // front (moved or landed), and stale entries are dropped only when the date is next asked for.
  double first = kInf;
  bool recheck = false;
  void advance(double now) {
    const double x = level * (now - since), s = integral + x, b = s - integral;
    carry += (integral - (s - b)) + (x - b);  // TwoSum
    integral = s;
    since = now;
  }
  double left(double key) const { return std::max(0.0, (key - integral) - carry); }
};

// The links a phase's flows connect (through flows sharing them): each flow's sharing changes only
// with its own set's flows, as in SimGrid's lazy solve. A flat phase's NICs are one set; each
// node's NVLink, and in the hierarchical scheme each rail of NICs, is one.
struct SharingGroup {
  std::unique_ptr<BipartiteSharing> sharing;
  std::vector<std::uint32_t> link[2];    // its up links and its down links, in FluidPhase::links_
  std::vector<std::uint32_t> pair_head;  // [up * downs + down]: a flow of the pair, or kNone
  std::vector<std::uint32_t> joined;     // flows that joined since its last solve
  bool changed = false;
};

class FluidPhase {
 public:
  FluidPhase(const routing::MoePhase& phase, std::uint32_t ranks, const FabricParams& f, std::uint64_t token_bytes)
      : stage0_into_(ranks, 0), stage1_from_(ranks) {
    const double nic = f.nic_gbps_per_gpu * 1e9 / 8.0;  // as GpuFabric builds its links
    const double nvl = f.nvlink_gbytes_s * 1e9;
    const double nic_lat = to_seconds(f.nic_latency), nvl_lat = to_seconds(f.nvlink_latency);
    links_.resize(4 * static_cast<std::size_t>(ranks));  // NIC up, NIC down, NVLink up, NVLink down
    dates_.assign(links_.size(), kInf);
    flows_.reserve(phase.messages.size());
    for (const routing::MoeMessage& m : phase.messages) {
      const bool nvlink = m.from / f.gpus_per_node == m.to / f.gpus_per_node;  // GpuFabric::route
      const std::uint32_t base = nvlink ? 2 * ranks : 0;
      const double lat = nvlink ? nvl_lat : nic_lat;
      FluidFlow fl{{base + m.from, base + ranks + m.to}, 0, 0, 0, m.to, m.stage};
      fl.penalty = lat + lat;
      fl.bytes = static_cast<double>(m.tokens * token_bytes);
      if (m.stage == 0) ++stage0_into_[m.to];
      if (m.stage == 1) stage1_from_[m.from].push_back(static_cast<std::uint32_t>(flows_.size()));
      flows_.push_back(fl);
    }
    version_.assign(flows_.size(), 0);
    make_groups(ranks, nic, nvl);
  }

  double run(double t0) {
    now_ = t0;
    for (std::uint32_t i = 0; i < flows_.size(); ++i)
      if (flows_[i].stage == 0) start(i);
    for (std::uint32_t r = 0; r < stage0_into_.size(); ++r)
      if (stage0_into_[r] == 0) release(r);
    std::size_t landed = 0;
    std::vector<std::uint32_t> due;
    while (landed < flows_.size()) {
      for (SharingGroup& g : groups_)
        if (g.changed) solve(g);
      advance(due);
      for (std::uint32_t i : due) {
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
  // The connected sets of links over all of the phase's flows (union-find), one sharing each.
  void make_groups(std::uint32_t ranks, double nic, double nvl) {
    std::vector<std::uint32_t> root(links_.size());
    for (std::uint32_t l = 0; l < root.size(); ++l) root[l] = l;
    const auto find = [&root](std::uint32_t l) {
      while (root[l] != l) l = root[l] = root[root[l]];
      return l;
    };
    for (const FluidFlow& fl : flows_) root[find(fl.link[0])] = find(fl.link[1]);
    std::vector<std::uint32_t> group_of(links_.size(), kNone), index(links_.size(), kNone);
    for (const FluidFlow& fl : flows_)
      for (int k = 0; k < 2; ++k) {
        const std::uint32_t l = fl.link[k], r = find(l);
        if (group_of[r] == kNone) group_of[r] = static_cast<std::uint32_t>(groups_.size()), groups_.emplace_back();
        SharingGroup& g = groups_[group_of[r]];
        if (index[l] == kNone) index[l] = static_cast<std::uint32_t>(g.link[k].size()), g.link[k].push_back(l);
      }
    for (FluidFlow& fl : flows_) {
      fl.group = group_of[find(fl.link[0])];
      fl.up = index[fl.link[0]];
      fl.down = index[fl.link[1]];
    }
    for (SharingGroup& g : groups_) {
      const auto ups = static_cast<std::uint32_t>(g.link[0].size()),
                 downs = static_cast<std::uint32_t>(g.link[1].size());
      g.sharing = std::make_unique<BipartiteSharing>(ups, downs, g.link[0][0] < 2 * ranks ? nic : nvl);
      g.pair_head.assign(static_cast<std::size_t>(ups) * downs, kNone);
    }
  }

  // A message leaves now: its latency first, outside the sharing.
  void start(std::uint32_t i) {
    flows_[i].state = FlowState::Latency;
    latencies_.push_back({flows_[i].penalty + now_, i});  // SimGrid: latency_ + get_last_update()
    std::push_heap(latencies_.begin(), latencies_.end(), std::greater<>());
  }

  void release(std::uint32_t rank) {
    for (std::uint32_t i : stage1_from_[rank]) start(i);
  }

  // The clock moves to the next date, as SimGrid's engine moves it; everything due within
  // surf/precision of it happens now (latencies end, messages land) and is handed back.
  void advance(std::vector<std::uint32_t>& due) {
    double next = latencies_.empty() ? kInf : latencies_.front().date;
    double least[4] = {kInf, kInf, kInf, kInf};  // four chains: the scan is one per event
    std::size_t at = 0;
    for (; at + 4 <= dates_.size(); at += 4)
      for (std::size_t j = 0; j < 4; ++j) least[j] = dates_[at + j] < least[j] ? dates_[at + j] : least[j];
    for (; at < dates_.size(); ++at) next = std::min(next, dates_[at]);
    for (const double d : least) next = std::min(next, d);
    RAILCHECK_ASSERT(next < kInf, "a phase with messages in flight has a next event");
    now_ = now_ + (next - now_);
    due.clear();
    while (!latencies_.empty() && std::fabs(latencies_.front().date - now_) < kSurfPrecision) {
      due.push_back(latencies_.front().flow);
      std::pop_heap(latencies_.begin(), latencies_.end(), std::greater<>());
      latencies_.pop_back();
    }
    for (std::uint32_t k = 0; k < links_.size(); ++k) {
      if (!(std::fabs(dates_[k] - now_) < kSurfPrecision)) continue;
      LinkClock& l = links_[k];
      do {
        RAILCHECK_ASSERT(version_[l.landings.front().flow] == l.landings.front().version,
                         "a dated link's first landing is live");
        due.push_back(l.landings.front().flow);
        version_[l.landings.front().flow]++;
        std::pop_heap(l.landings.begin(), l.landings.end(), std::greater<>());
        l.landings.pop_back();
        l.recheck = true;
        date(k);
      } while (std::fabs(dates_[k] - now_) < kSurfPrecision);
    }
    RAILCHECK_ASSERT(!due.empty(), "the next event's date has something due");
  }

  // When the link's first live landing is due at its level (SimGrid: now + remains / value at the
  // last solve); stale entries (flows that moved or landed) are dropped on the way.
  void date(std::uint32_t k) {
    LinkClock& l = links_[k];
    if (l.recheck) {
      while (!l.landings.empty() && version_[l.landings.front().flow] != l.landings.front().version) {
        std::pop_heap(l.landings.begin(), l.landings.end(), std::greater<>());
        l.landings.pop_back();
      }
      l.first = l.landings.empty() ? kInf : l.landings.front().integral;
      l.recheck = false;
    }
    if (l.first == kInf) {
      dates_[k] = kInf;
      return;
    }
    RAILCHECK_ASSERT(l.level > 0, "a link holding landings is the bottleneck of their flows");
    dates_[k] = l.since + l.left(l.first) / l.level;
  }

  // Its latency paid, a message joins the sharing; it gets its bottleneck at the next solve.
  void enable(std::uint32_t i) {
    FluidFlow& fl = flows_[i];
    RAILCHECK_ASSERT(fl.state == FlowState::Latency, "only a message in its latency joins the sharing");
    fl.state = FlowState::Active;
    SharingGroup& g = groups_[fl.group];
    g.sharing->add(fl.up, fl.down);
    std::uint32_t& head = g.pair_head[static_cast<std::size_t>(fl.up) * g.link[1].size() + fl.down];
    fl.pair_next = head;
    if (head != kNone) flows_[head].pair_prev = i;
    head = i;
    g.joined.push_back(i);
    g.changed = true;
  }

  void land(std::uint32_t i) {
    FluidFlow& fl = flows_[i];
    RAILCHECK_ASSERT(fl.state == FlowState::Active && fl.bottleneck != kNone, "only a solved, sharing flow lands");
    fl.state = FlowState::Landed;
    SharingGroup& g = groups_[fl.group];
    g.sharing->remove(fl.up, fl.down);
    std::uint32_t& head = g.pair_head[static_cast<std::size_t>(fl.up) * g.link[1].size() + fl.down];
    if (fl.pair_prev != kNone)
      flows_[fl.pair_prev].pair_next = fl.pair_next;
    else
      head = fl.pair_next;
    if (fl.pair_next != kNone) flows_[fl.pair_next].pair_prev = fl.pair_prev;
    g.changed = true;
  }

  std::uint32_t bottleneck(const SharingGroup& g, std::uint32_t up, std::uint32_t down) const {
    return g.sharing->fixed_by_up(up, down) ? g.link[0][up] : g.link[1][down];
  }

  // The flow's landing moves to link b (its bytes left carried over at `now_`, both integrals
  // being up to date).
  void settle(std::uint32_t i, std::uint32_t b) {
    FluidFlow& fl = flows_[i];
    RAILCHECK_ASSERT(fl.state == FlowState::Active && b != fl.bottleneck, "a sharing flow moves to another link");
    if (fl.bottleneck != kNone) {
      fl.bytes = links_[fl.bottleneck].left(fl.landing);
      links_[fl.bottleneck].recheck = true;
      version_[i]++;
    }
    LinkClock& l = links_[b];
    fl.bottleneck = b;
    fl.landing = l.integral + (l.carry + fl.bytes);
    l.landings.push_back({fl.landing, i, version_[i]});
    std::push_heap(l.landings.begin(), l.landings.end(), std::greater<>());
    l.first = std::min(l.first, fl.landing);
  }

  // SimGrid's lazy solve of a changed sharing: every flow's bytes advance at its old rate (each
  // link's integral to now), the max-min levels are solved again, the flows whose bottleneck
  // changed move, and each link's next landing is dated at its new level.
  void solve(SharingGroup& g) {
    for (int side = 0; side < 2; ++side)
      for (std::uint32_t l : g.link[side]) links_[l].advance(now_);
    const std::size_t downs = g.link[1].size();
    g.sharing->solve([&](std::uint32_t up, std::uint32_t down) {
      const std::uint32_t b = bottleneck(g, up, down);
      for (std::uint32_t i = g.pair_head[up * downs + down]; i != kNone; i = flows_[i].pair_next)
        if (flows_[i].bottleneck != kNone && flows_[i].bottleneck != b) settle(i, b);
    });
    for (std::uint32_t i : g.joined)
      if (flows_[i].bottleneck == kNone) settle(i, bottleneck(g, flows_[i].up, flows_[i].down));
    g.joined.clear();
    for (int side = 0; side < 2; ++side)
      for (std::uint32_t k = 0; k < g.link[side].size(); ++k) {
        links_[g.link[side][k]].level = g.sharing->level(side == 0, k);
        date(g.link[side][k]);
      }
    g.changed = false;
  }

  std::vector<FluidFlow> flows_;
  std::vector<SharingGroup> groups_;
  std::vector<LinkClock> links_;
  std::vector<double> dates_;  // per link: when its next landing is due (kInf: none)
  // Per flow, bumped when it leaves a link's landings (moved or landed): older entries are stale.
  std::vector<std::uint32_t> version_;
  std::vector<LatencyEnd> latencies_;                    // a min-heap
  std::vector<std::uint32_t> stage0_into_;               // stage-0 messages still due per rank
  std::vector<std::vector<std::uint32_t>> stage1_from_;  // per rank
  double now_ = 0;
};

}  // namespace

double fluid_moe_phase(const routing::MoePhase& phase, std::uint32_t ranks, const FabricParams& fabric,
                       std::uint64_t token_bytes, double t0) {
  if (phase.messages.empty()) return 0;
  return FluidPhase(phase, ranks, fabric, token_bytes).run(t0);
}

}  // namespace railcheck::sim
