// Parsing the Flight Recorder reader's output (fr_calls.hpp), and running the reader.
#include "triage/fr_calls.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

extern char** environ;

namespace railcheck::triage {
namespace {

using nlohmann::json;

std::int64_t elements(const std::vector<Shape>& shapes) {
  if (shapes.empty()) return 0;
  std::int64_t n = 1;
  for (auto d : shapes.front()) n *= d;
  return n;
}

std::string shape_text(const std::vector<Shape>& shapes) {
  std::vector<std::string> parts;
  for (const auto& s : shapes) parts.push_back(fmt::format("[{}]", fmt::join(s, ", ")));
  return fmt::format("{}", fmt::join(parts, " "));
}

FrEntry entry_from(const json& e) {
  FrEntry out;
  out.record_id = e.at("record_id").get<std::uint64_t>();
  out.pg = e.at("pg").get<std::string>();
  out.coll_seq = e.at("coll_seq").get<std::int64_t>();
  out.p2p_seq = e.at("p2p_seq").get<std::int64_t>();
  out.op_id = e.at("op_id").get<std::int64_t>();
  out.op = e.at("op").get<std::string>();
  out.is_p2p = e.at("is_p2p").get<bool>();
  if (e.contains("peer")) out.peer = e.at("peer").get<std::uint32_t>();
  out.in_sizes = e.at("in_sizes").get<std::vector<Shape>>();
  out.out_sizes = e.at("out_sizes").get<std::vector<Shape>>();
  out.in_dtypes = e.at("in_dtypes").get<std::vector<std::string>>();
  out.out_dtypes = e.at("out_dtypes").get<std::vector<std::string>>();
  out.state = e.at("state").get<std::string>();
  if (e.contains("call_site")) {
    const auto& s = e.at("call_site");
    out.site = CallSite{s.at("file").get<std::string>(), s.at("line").get<int>(), s.at("func").get<std::string>()};
  }
  return out;
}

FrDump dump_from(const json& d) {
  FrDump out;
  out.source = d.at("source").get<std::string>();
  out.rank = d.at("rank").get<std::uint32_t>();
  out.dump_version = d.at("dump_version").get<std::string>();
  out.comm_lib_version = d.at("comm_lib_version").get<std::string>();
  for (const auto& pg : d.at("pgs"))
    out.pgs.push_back(FrProcessGroup{pg.at("id").get<std::string>(), pg.at("desc").get<std::string>(),
                                     pg.at("ranks").get<std::vector<std::uint32_t>>()});
  for (const auto& e : d.at("entries")) out.entries.push_back(entry_from(e));
  return out;
}

std::string read_all(int fd) {
  std::string out;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      out.append(buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return out;
  }
}

std::string reader_path() {
  if (const char* p = std::getenv("RAILCHECK_FR_READER"); p != nullptr && *p != '\0') return p;
  return RAILCHECK_FR_READER_DEFAULT;
}

}  // namespace

std::string CallSite::describe() const {
  const auto slash = file.rfind('/');
  return fmt::format("{}:{} ({})", slash == std::string::npos ? file : file.substr(slash + 1), line, func);
}

std::int64_t FrEntry::in_elements() const { return elements(in_sizes); }
std::int64_t FrEntry::out_elements() const { return elements(out_sizes); }

std::string FrEntry::describe() const {
  std::string out = op;
  if (peer) out += fmt::format(" {} rank {}", op == "recv" ? "from" : "to", *peer);
  if (!in_sizes.empty()) out += fmt::format(" in {} {}", shape_text(in_sizes), fmt::join(in_dtypes, ","));
  if (!out_sizes.empty() && out_sizes != in_sizes) out += fmt::format(" out {}", shape_text(out_sizes));
  return out;
}

const FrProcessGroup* FrDump::pg(std::string_view id) const {
  for (const auto& g : pgs)
    if (g.id == id) return &g;
  return nullptr;
}

Result<std::vector<FrDump>> parse_fr_calls(std::string_view text) {
  json doc = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded())
    return Error{"the Flight Recorder reader's output is not JSON", "run triage/fr_dump_read.py by hand"};
  if (!doc.is_object() || doc.value("format", "") != "railcheck-fr-calls")
    return Error{"the reader's output is not a railcheck-fr-calls document", ""};
  if (doc.value("format_version", 0) != 1)
    return Error{fmt::format("railcheck-fr-calls version {} is not 1", doc.value("format_version", 0)),
                 "the reader and this railcheck come from different versions"};
  std::vector<FrDump> out;
  for (const auto& d : doc.at("dumps")) {
    try {
      out.push_back(dump_from(d));
    } catch (const json::exception& e) {
      return Error{fmt::format("{}: a field is missing or has the wrong type ({})", d.value("source", "?"), e.what()),
                   ""};
    }
  }
  return out;
}

Result<std::vector<FrDump>> read_fr_dumps(const std::vector<std::string>& paths) {
  const std::string reader = reader_path();
  std::vector<std::string> args{"python3", reader};
  args.insert(args.end(), paths.begin(), paths.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0)
    return Error{"cannot make a pipe for the Flight Recorder reader", ""};
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err_pipe[1], 2);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, "python3", &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (rc != 0) {
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    return Error{"reading Flight Recorder pickles needs python3, which cannot be started",
                 "install python3 (scripts/install-deps.sh does)"};
  }
  const std::string out = read_all(out_pipe[0]);
  const std::string err = read_all(err_pipe[0]);
  ::close(out_pipe[0]);
  ::close(err_pipe[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string line = err.substr(0, err.find('\n'));
    if (line.rfind("fr_dump_read: ", 0) == 0) line = line.substr(14);
    if (line.empty()) line = fmt::format("the Flight Recorder reader {} failed (status {})", reader, status);
    return Error{line, ""};
  }
  return parse_fr_calls(out);
}

}  // namespace railcheck::triage
