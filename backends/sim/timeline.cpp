#include "backends/sim/timeline.hpp"

#include <fmt/format.h>

#include <map>
#include <tuple>

namespace railcheck::sim {
namespace {

using nlohmann::json;

constexpr int kLinksPid = 0;  // ranks are pid rank + 1, so the links sort first

double micros(Nanos t) { return static_cast<double>(t.count()) / 1000.0; }

std::string_view category(TraceKind k) {
  switch (k) {
    case TraceKind::PrimaryRts:
    case TraceKind::StandbyReady:
    case TraceKind::MrRegisteredLazily: return "setup";
    case TraceKind::HeartbeatMissed:
    case TraceKind::FalseAlarm:
    case TraceKind::RtoWidened:
    case TraceKind::RailVerdict: return "detection";
    case TraceKind::PathFailed:
    case TraceKind::FailoverStarted:
    case TraceKind::Drained:
    case TraceKind::Switched:
    case TraceKind::ConnectionFailed: return "failover";
    case TraceKind::Replayed:
    case TraceKind::ResyncWatermark:
    case TraceKind::ProbeResult:
    case TraceKind::DuplicateDropped: return "replay";
  }
  return "engine";
}

// Tracks are numbered per rank: connection end (conn, side) and path p.
class Tracks {
 public:
  explicit Tracks(json& events) : events_(events) {}
  int tid(std::uint32_t rank, std::uint32_t conn, Side side, std::uint32_t path) {
    const auto key = std::make_tuple(rank, conn, side, path);
    auto [it, fresh] = ids_.try_emplace(key, static_cast<int>(ids_.size()) + 1);
    if (fresh)
      events_.push_back(json{
          {"ph", "M"},
          {"name", "thread_name"},
          {"pid", rank + 1},
          {"tid", it->second},
          {"args",
           {{"name", fmt::format("conn {} {} path {}", conn, side == Side::Sender ? "sender" : "receiver", path)}}}});
    return it->second;
  }

 private:
  json& events_;
  std::map<std::tuple<std::uint32_t, std::uint32_t, Side, std::uint32_t>, int> ids_;
};

void link_events(const Scenario& sc, json& events) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, int> tids;
  auto tid = [&](const LinkRef& l) {
    auto [it, fresh] = tids.try_emplace({l.rank, l.rail}, static_cast<int>(tids.size()) + 1);
    if (fresh)
      events.push_back(json{{"ph", "M"},
                            {"name", "thread_name"},
                            {"pid", kLinksPid},
                            {"tid", it->second},
                            {"args", {{"name", fmt::format("rank {} rail {}", l.rank, l.rail)}}}});
    return it->second;
  };
  std::map<std::pair<std::uint32_t, std::uint32_t>, Nanos> down_since;
  const Nanos end = sc.time_limit;
  auto outage = [&](const LinkRef& l, Nanos from, Nanos to) {
    events.push_back(json{{"ph", "X"},
                          {"cat", "fault"},
                          {"name", "link down"},
                          {"pid", kLinksPid},
                          {"tid", tid(l)},
                          {"ts", micros(from)},
                          {"dur", micros(to - from)}});
  };
  for (const LinkChange& c : expand_link_changes(sc.faults)) {
    const auto key = std::make_pair(c.link.rank, c.link.rail);
    if (!c.up) {
      down_since.try_emplace(key, c.at);
    } else if (auto it = down_since.find(key); it != down_since.end()) {
      outage(c.link, it->second, c.at);
      down_since.erase(it);
    }
  }
  for (const auto& [key, from] : down_since) outage(LinkRef{key.first, key.second}, from, end);
  for (const LinkJitter& j : sc.faults.jitters)
    events.push_back(json{{"ph", "X"},
                          {"cat", "fault"},
                          {"name", "jitter"},
                          {"pid", kLinksPid},
                          {"tid", tid(j.link)},
                          {"ts", micros(j.at)},
                          {"dur", micros(j.until - j.at)},
                          {"args", {{"extra_us", micros(j.extra)}, {"spread_us", micros(j.spread)}}}});
}

}  // namespace

json timeline_json(const Scenario& sc, const RunOutput& out) {
  json events = json::array();
  events.push_back(json{{"ph", "M"}, {"name", "process_name"}, {"pid", kLinksPid}, {"args", {{"name", "links"}}}});
  for (std::uint32_t r = 0; r < sc.topology.ranks; ++r)
    events.push_back(
        json{{"ph", "M"}, {"name", "process_name"}, {"pid", r + 1}, {"args", {{"name", fmt::format("rank {}", r)}}}});
  link_events(sc, events);

  Tracks tracks(events);
  std::map<std::pair<std::uint32_t, Side>, const TraceRecord*> failover_open;  // per connection end
  for (const TraceRecord& t : out.traces) {
    const int tid = tracks.tid(t.rank, t.conn, t.side, t.note.path.value);
    events.push_back(json{{"ph", "i"},
                          {"s", "t"},
                          {"cat", category(t.note.kind)},
                          {"name", to_string(t.note.kind)},
                          {"pid", t.rank + 1},
                          {"tid", tid},
                          {"ts", micros(t.at)},
                          {"args", {{"count", t.note.count}, {"detail", t.note.detail}}}});
    const auto end = std::make_pair(t.conn, t.side);
    if (t.note.kind == TraceKind::FailoverStarted) failover_open.try_emplace(end, &t);
    if (t.note.kind == TraceKind::Switched || t.note.kind == TraceKind::ConnectionFailed) {
      if (auto it = failover_open.find(end); it != failover_open.end()) {
        const TraceRecord& s = *it->second;
        events.push_back(json{{"ph", "X"},
                              {"cat", "failover"},
                              {"name", "failover"},
                              {"pid", s.rank + 1},
                              {"tid", tracks.tid(s.rank, s.conn, s.side, s.note.path.value)},
                              {"ts", micros(s.at)},
                              {"dur", micros(t.at - s.at)},
                              {"args", {{"trigger", s.note.detail}}}});
        failover_open.erase(it);
      }
    }
  }
  return json{{"traceEvents", events},
              {"displayTimeUnit", "ms"},
              {"otherData", {{"scenario", out.summary.scenario}, {"seed", out.summary.seed}}}};
}

}  // namespace railcheck::sim
