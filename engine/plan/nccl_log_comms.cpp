// Splitting NCCL logs by communicator (nccl_log_comms.hpp).
#include "engine/plan/nccl_log_comms.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>

#include "engine/plan/nccl_log_lines.hpp"

namespace railcheck::plan {
namespace {

// The word after `key` in `body` ("commId 0xab .." -> "0xab"), or nothing.
std::optional<std::string> word_after(std::string_view body, std::string_view key) {
  const auto at = body.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  const auto from = at + key.size();
  const auto end = body.find_first_of(" -", from);
  auto w = body.substr(from, end == std::string_view::npos ? std::string_view::npos : end - from);
  if (w.empty()) return std::nullopt;
  return std::string(w);
}

// The pointer a line names with "comm 0x..": the first such, as NCCL prints one per line.
std::optional<std::string> comm_of(std::string_view body) {
  const auto at = body.find("comm 0x");
  if (at == std::string_view::npos) return std::nullopt;
  const std::size_t from = at + 5;  // at "0x"
  std::size_t end = from + 2;
  while (end < body.size() && std::isxdigit(static_cast<unsigned char>(body[end])) != 0) ++end;
  if (end == from + 2) return std::nullopt;
  return std::string(body.substr(from, end - from));
}

struct Line {
  std::size_t file = 0;
  std::string_view text;
  std::string comm_id;  // "" = shared by every communicator
};

class Splitter {
 public:
  explicit Splitter(const std::vector<LogFile>& files) : files_(files) {}

  std::vector<LogCommunicator> run() {
    for (std::size_t f = 0; f < files_.size(); ++f) scan(f);
    std::vector<LogCommunicator> out;
    if (ids_.size() < 2) {
      LogCommunicator one;
      one.files = files_;
      if (ids_.size() == 1) {
        one.id = ids_.begin()->first;
        one.nranks = ids_.begin()->second;
      }
      one.operations = ops_.empty() ? 0 : ops_.begin()->second;
      out.push_back(std::move(one));
      return out;
    }
    for (const auto& [id, nranks] : ids_) {
      LogCommunicator c;
      c.id = id;
      c.nranks = nranks;
      c.operations = ops_.count(id) ? ops_.at(id) : 0;
      for (std::size_t f = 0; f < files_.size(); ++f) c.files.push_back(LogFile{files_[f].name, {}});
      for (const auto& l : lines_)
        if (l.comm_id.empty() || l.comm_id == id) {
          c.files[l.file].text.append(l.text);
          c.files[l.file].text.push_back('\n');
        }
      out.push_back(std::move(c));
    }
    std::stable_sort(out.begin(), out.end(), [](const LogCommunicator& a, const LogCommunicator& b) {
      return a.operations != b.operations ? a.operations > b.operations : a.nranks > b.nranks;
    });
    return out;
  }

 private:
  void scan(std::size_t f) {
    const std::string_view text = files_[f].text;
    std::size_t pos = 0;
    while (pos < text.size()) {
      const auto end = std::min(text.find('\n', pos), text.size());
      const std::string_view line = text.substr(pos, end - pos);
      pos = end + 1;
      lines_.push_back(Line{f, line, assign(f, line)});
    }
  }

  // The communicator a line belongs to ("" = every one).
  std::string assign(std::size_t f, std::string_view line) {
    const auto pre = match_prefix(line);
    if (!pre) return {};
    const std::string process = files_[f].name + "|" + pre->host_pid;
    const std::string_view body = pre->body;
    const auto ptr = comm_of(body);
    if (ptr && body.find("Init START") != std::string_view::npos) name(process, *ptr, body);
    std::string id;
    if (ptr) {
      auto it = id_of_.find({process, *ptr});
      id = it != id_of_.end() ? it->second : std::string();
      if (!id.empty()) current_[process] = id;
    } else if (auto it = current_.find(process); it != current_.end()) {
      id = it->second;
    }
    if (!id.empty() && body.find(": opCount ") != std::string_view::npos) ++ops_[id];
    return id;
  }

  void name(const std::string& process, const std::string& ptr, std::string_view body) {
    std::string id;
    if (auto hash = word_after(body, " commId ")) {
      id = "commId " + *hash;
    } else if (auto parent = word_after(body, " parent ")) {
      auto it = id_of_.find({process, *parent});
      const std::string of = it != id_of_.end() ? it->second : "comm " + *parent;
      id = fmt::format("split of {}, color {}, split {}", of, word_after(body, " color ").value_or("?"),
                       word_after(body, " splitCount ").value_or("?"));
    } else {
      return;
    }
    id_of_[{process, ptr}] = id;
    const auto nranks = word_after(body, " nranks ");
    ids_[id] = nranks ? number_of<std::uint32_t>(*nranks).value_or(0) : 0;
  }

  const std::vector<LogFile>& files_;
  std::vector<Line> lines_;
  std::map<std::pair<std::string, std::string>, std::string> id_of_;  // (process, pointer) -> id
  std::map<std::string, std::string> current_;                        // process -> last named id
  std::map<std::string, std::uint32_t> ids_;                          // id -> nranks
  std::map<std::string, std::size_t> ops_;                            // id -> COLL lines
};

}  // namespace

std::vector<LogCommunicator> split_by_communicator(const std::vector<LogFile>& files) { return Splitter(files).run(); }

std::string describe(const std::vector<LogCommunicator>& split) {
  std::vector<std::string> parts;
  for (const auto& c : split)
    parts.push_back(
        fmt::format("{} ({} ranks, {} operations)", c.id.empty() ? "unnamed" : c.id, c.nranks, c.operations));
  return fmt::format("{} communicator{}: {}", split.size(), split.size() == 1 ? "" : "s", fmt::join(parts, "; "));
}

}  // namespace railcheck::plan
