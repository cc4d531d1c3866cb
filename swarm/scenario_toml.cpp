#include "swarm/scenario_toml.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <sstream>

namespace railcheck::swarm {
namespace {

// Shortest text that reads back to the same double; times go through milliseconds.
std::string num(double v) { return fmt::format("{}", v); }
std::string msec(Nanos t) { return num(to_millis(t)); }
std::string usec(Nanos t) { return num(static_cast<double>(t.count()) * 1e-3); }

void link(std::string& out, const LinkRef& l) { out += fmt::format("rank = {}\nrail = {}\n", l.rank, l.rail); }

void write_faults(std::string& out, const FaultProfile& f) {
  for (const LinkDown& d : f.downs) {
    out += "\n[[faults.link_down]]\n";
    link(out, d.link);
    out += fmt::format("at_ms = {}\n", msec(d.at));
    if (d.until) out += fmt::format("until_ms = {}\n", msec(*d.until));
  }
  for (const LinkFlap& x : f.flaps) {
    out += "\n[[faults.flap]]\n";
    link(out, x.link);
    out += fmt::format("start_ms = {}\nperiod_ms = {}\ndown_ms = {}\ncount = {}\n", msec(x.start), msec(x.period),
                       msec(x.down_for), x.count);
  }
  for (const LinkJitter& j : f.jitters) {
    out += "\n[[faults.jitter]]\n";
    link(out, j.link);
    out += fmt::format("at_ms = {}\nuntil_ms = {}\nextra_us = {}\nspread_us = {}\n", msec(j.at), msec(j.until),
                       usec(j.extra), usec(j.spread));
  }
  for (const OneWayLoss& l : f.losses) {
    out += "\n[[faults.one_way_loss]]\n";
    link(out, l.link);
    out += fmt::format("at_ms = {}\nuntil_ms = {}\nprobability = {}\n", msec(l.at), msec(l.until), num(l.probability));
  }
  for (const Incast& i : f.incasts) {
    out += "\n[[faults.incast]]\n";
    link(out, i.link);
    out += fmt::format("at_ms = {}\nuntil_ms = {}\nflows = {}\n", msec(i.at), msec(i.until), i.flows);
  }
  for (const ProcessStall& s : f.stalls)
    out += fmt::format("\n[[faults.stall]]\nrank = {}\nat_ms = {}\nfor_ms = {}\n", s.rank, msec(s.at), msec(s.for_));
}

}  // namespace

std::string scenario_toml(const Scenario& sc, const std::string& comment) {
  std::string out;
  std::istringstream lines(comment);
  for (std::string line; std::getline(lines, line);) out += line.empty() ? "#\n" : "# " + line + "\n";
  out += fmt::format("name = \"{}\"\ndescription = \"{}\"\nseed = {}\ntime_limit_ms = {}\n", sc.name, sc.description,
                     sc.seed, msec(sc.time_limit));

  const Topology& t = sc.topology;
  out += fmt::format(
      "\n[topology]\nranks = {}\nrails = {}\npaths_per_conn = {}\nnic = \"{}\"\nlink_gbps = {}\nlink_latency_us = {}\n"
      "mtu = {}\n",
      t.ranks, t.rails, t.paths_per_conn, t.nic.name, num(t.nic.link_gbps), usec(t.nic.link_latency), t.nic.mtu);

  const Workload& w = sc.workload;
  out += fmt::format(
      "\n[workload]\npattern = \"{}\"\nmessage_bytes = {}\nmessages = {}\nwindow = {}\nchannels = {}\nrecv_group = {}\n"
      "start_ms = {}\nreceiver_hold_ms = {}\nslow_ranks = [{}]\n",
      w.pattern == TrafficPattern::Bidirectional ? "bidirectional" : "unidirectional", w.message_bytes, w.messages,
      w.window, w.channels, w.recv_group, msec(w.start), msec(w.receiver_hold), fmt::join(w.slow_ranks, ", "));

  out += fmt::format("\n[engine]\nreplay_policy = \"{}\"\n", to_string(sc.engine.replay));
  for (const TunableInfo& info : tunable_table())
    if (auto v = get_tunable(sc.engine, info.key)) out += fmt::format("{} = {}\n", info.key, num(*v));

  write_faults(out, sc.faults);
  return out;
}

}  // namespace railcheck::swarm
