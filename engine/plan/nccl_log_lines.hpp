#pragma once
// The shapes of the NCCL INFO lines the log importer reads (nccl_log_import.cpp), one matcher
// each. Hand-written instead of std::regex: libstdc++'s regex recurses per character, and one long
// line (a 200 KB line of '#') overflowed the stack; each matcher is linear in the line. Views
// returned point into the line given.
#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

namespace railcheck::plan {

// "host:pid:tid [dev] " (optional) then "NCCL INFO ", after leading spaces: the host:pid key
// ("" without the prefix) and the body after "NCCL INFO ".
struct Prefixed {
  std::string host_pid;
  std::string_view body;
};
std::optional<Prefixed> match_prefix(std::string_view line);

// The channel count of a communicator, from its ring lines at init (src/graph/connect.cc,
// ncclTopoPreset/ncclTopoPostset: INFO(NCCL_INIT, "Channel %02d/%02d : %s", c, nChannels, ranks)):
//   "Channel 00/02 : 0 1"  ->  "02"
// The transport lines that follow look alike but name a connection, not the count
// ("Channel 00/0 : 1[0] -> 0[0] [receive] via NET/Socket/0"); they carry "->" and are skipped.
std::optional<std::string_view> match_ring_channels(std::string_view body);

// "comm 0x<hex> rank <n> nranks <n> " then "Init COMPLETE" somewhere after, anywhere in the body.
struct InitLine {
  std::string comm;
  std::string_view rank, nranks;
};
std::optional<InitLine> match_init(std::string_view body);

// The whole body: "<Op>: opCount N sendbuff P recvbuff P count N datatype N op N root N comm P
// [nranks=N] stream P", trailing spaces allowed.
struct OpFields {
  std::string_view op, op_count, count, datatype, redop, root, comm, nranks;
};
std::optional<OpFields> match_op(std::string_view body);

// A decimal field of a line; out of range of T is nothing, never a wrap or an exception.
template <typename T>
std::optional<T> number_of(std::string_view text) {
  T v{};
  const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || p != text.data() + text.size()) return std::nullopt;
  return v;
}

}  // namespace railcheck::plan
