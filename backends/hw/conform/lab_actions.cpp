// The parent's lab actions (lab_actions.hpp).
#include "backends/hw/conform/lab_actions.hpp"

#include <fmt/format.h>
#include <signal.h>

#include <algorithm>

namespace railcheck::conform {

// A rail's impairment on one side lives in its own nftables table, "railcheck_r<rail>", in that
// side's namespace: an output-hook chain matching the rail's interface (locally sent packets: the
// lab's sockets). Clearing it deletes the table.
std::string impairment_table(int rail) { return fmt::format("railcheck_r{}", rail); }

Result<std::string> nft_in(const NetnsSide& side, const std::string& commands) {
  return run_ip({"netns", "exec", side.netns, "nft", commands});
}

// Every impairment of the lab removed (a run's own at its end, a crashed run's at the next start).
// Deleting a table that is not there is an error nft prints and nothing else.
void clear_impairments(const NetnsLab& lab) {
  for (int s = 0; s < 2; ++s)
    for (std::size_t rail = 0; rail < lab.rails(); ++rail)
      (void)nft_in(lab.side(s), "delete table inet " + impairment_table(static_cast<int>(rail)));
}


// The parent's action, made now; an Error says what the kernel or a tool refused.
Result<bool> make_action(const NetnsLab& lab, const LabAction& a, pid_t receiver, Impairments& imp) {
  const NetnsSide& side = lab.side(a.side);
  const std::string& dev = side.rails.at(static_cast<std::size_t>(a.rail)).if_name;
  const std::string table = impairment_table(a.rail);
  const std::pair<int, int> end{a.side, a.rail};
  switch (a.kind) {
    case LabAction::Kind::Loss: {
      // numgen draws per packet from the kernel's PRNG: the lab's loss is not replayable from the
      // run's seed (validate says so).
      constexpr std::uint64_t kScale = 1'000'000;
      const auto below = static_cast<std::uint64_t>(std::clamp(a.loss, 0.0, 1.0) * static_cast<double>(kScale));
      const std::string match = below >= kScale ? "" : fmt::format("numgen random mod {} < {} ", kScale, below);
      const std::string cmds = fmt::format(
          "add table inet {0} ; add chain inet {0} out {{ type filter hook output priority 0 ; policy accept ; }} ; "
          "flush chain inet {0} out ; add rule inet {0} out oifname \"{1}\" {2}drop",
          table, dev, match);
      if (auto done = nft_in(side, cmds); !done) return done.error();
      imp.lossy[end] = true;
      return true;
    }
    case LabAction::Kind::Delay: {
      auto it = imp.delayers.find(end);
      if (it == imp.delayers.end()) return Error{"lab: no packet delayer was started for this delay", ""};
      return it->second->engage();
    }
    case LabAction::Kind::Clear:
      if (auto it = imp.delayers.find(end); it != imp.delayers.end())
        if (auto done = it->second->disengage(); !done) return done.error();
      if (imp.lossy[end]) {
        if (auto done = nft_in(side, "delete table inet " + table); !done) return done.error();
        imp.lossy[end] = false;
      }
      return true;
    case LabAction::Kind::StopReceiver:
      if (kill(receiver, SIGSTOP) != 0) return Error{"lab: SIGSTOP to side b failed", ""};
      return true;
    case LabAction::Kind::ContReceiver:
      if (kill(receiver, SIGCONT) != 0) return Error{"lab: SIGCONT to side b failed", ""};
      return true;
    case LabAction::Kind::LinkDown:
    case LabAction::Kind::LinkUp:
      break;
  }
  return Error{"lab: a link change is side b's to make", ""};
}

}  // namespace railcheck::conform
