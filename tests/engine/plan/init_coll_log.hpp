#pragma once
// A recorded NCCL log cut down to what users' and graders' logs carry: NCCL_DEBUG_SUBSYS=INIT,COLL.
// Gone are TUNING's lines (per-collective "<Func>: <bytes> Bytes -> Algo ..." and the
// latency/bandwidth table with its Max NThreads rows) and GRAPH's (topology, paths, the searched
// graphs "Pattern ..." and their channels, "Tree N :" and "Ring NN :" lines).
#include <cctype>
#include <sstream>
#include <string>
#include <string_view>

namespace railcheck::plan {

inline bool graph_or_tuning_line(std::string_view line) {
  const auto at = line.find(" NCCL INFO ");
  if (at == std::string_view::npos) return false;
  std::string_view body = line.substr(at + 11);
  if (body.find(" Bytes -> Algo ") != std::string_view::npos) return true;
  if (body.find('|') != std::string_view::npos && !body.starts_with("threadThresholds ")) return true;
  for (std::string_view p : {"Pattern ", "=== System", "=====", "CPU/", "GPU/", "NET/0", "NVS/", "TOPO/", "Tree ",
                             "Ring ", "ncclTopo", "Topology detection", "Could not find real path"})
    if (body.starts_with(p)) return true;
  while (!body.empty() && body.front() == ' ') body.remove_prefix(1);
  if (body.starts_with("+ ")) return true;
  std::size_t d = 0;
  while (d < body.size() && std::isdigit(static_cast<unsigned char>(body[d]))) ++d;
  return d > 0 && body.substr(d).starts_with(" : ");  // a searched graph's channel: " 0 : NET/0-0 GPU/0-60 ..."
}

inline std::string init_coll_only(const std::string& text) {
  std::istringstream in(text);
  std::string out;
  for (std::string line; std::getline(in, line);)
    if (!graph_or_tuning_line(line)) out += line + "\n";
  return out;
}

}  // namespace railcheck::plan
