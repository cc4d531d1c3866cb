// The suite's job key and its foreign-control-message case (auth_case.hpp).
#include "backends/hw/conform/auth_case.hpp"

#include <fmt/format.h>
#include <rdma/fi_errno.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>

#include "backends/hw/auth/job_key_source.hpp"
#include "backends/hw/libfabric/control_codec.hpp"
#include "backends/hw/libfabric/fabric_rail.hpp"
#include "engine/auth/sealed_channel.hpp"
#include "engine/handshake/handle_codec.hpp"

namespace railcheck::conform {
namespace {

// 32 random bytes as hex, the form `openssl rand -hex 32` gives a key file.
std::string fresh_key_hex() {
  std::random_device rd;
  std::string key;
  for (int i = 0; i < 8; ++i) key += fmt::format("{:08x}", rd());
  return key;
}

}  // namespace

void ensure_job_key() {
  if (std::getenv(hw::kJobKeyFileEnv) != nullptr || std::getenv(hw::kJobKeyEnv) != nullptr ||
      std::getenv(hw::kJobAuthEnv) != nullptr)
    return;
  ::setenv(hw::kJobKeyEnv, fresh_key_hex().c_str(), 1);
}

std::optional<auth::JobKey> job_key() {
  auto s = hw::job_key_from_environment();
  if (!s) return std::nullopt;  // ensure_job_key ran: only a malformed caller's key gets here
  return s.value().key;
}

Result<int> inject_foreign_control(const std::string& provider, const std::string& node,
                                   const std::vector<std::uint8_t>& handle, const std::atomic<std::uint64_t>& refused) {
  if (handle.size() < kHandleWireSize) return Error{"inject: a short handle", ""};
  const std::vector<std::uint8_t> binding(handle.begin(), handle.begin() + kHandleWireSize);
  auto decoded = decode_handle(binding);
  if (!decoded) return decoded.error();
  auto rail = fabric::FabricRail::open(provider, node, 64);
  if (!rail) return rail.error();
  if (auto ok = rail.value()->insert_peer(decoded.value().handle.primary); !ok) return ok.error();
  auto plain = fabric::encode_control(false, Ping{46});
  if (!plain) return plain.error();
  const auto key = job_key();
  const auto other = auth::JobKey::from_bytes(std::vector<std::uint8_t>(32, 0x99)).value();
  std::vector<std::vector<std::uint8_t>> sends;
  if (key) {
    auth::SealedChannel as_connector(*key, "railcheck control v1", binding, 0, 1);
    auto replayed = plain.value();
    as_connector.seal(replayed);  // counter 1: the connector's ConnectRequest took it
    auto altered = plain.value();
    for (int i = 0; i < 100; ++i) {  // a counter not taken yet, then one tag byte changed
      altered = plain.value();
      as_connector.seal(altered);
    }
    altered.back() ^= 0x01;
    sends.push_back(std::move(altered));
    sends.push_back(std::move(replayed));
  }
  auth::SealedChannel other_job(other, "railcheck control v1", binding, 0, 1);
  auto foreign = plain.value();
  other_job.seal(foreign);
  sends.push_back(std::move(foreign));
  std::array<int, 3> contexts{};
  int left = 0;
  for (std::size_t i = 0; i < sends.size(); ++i) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    ssize_t rc = 0;
    while ((rc = rail.value()->tsend(sends[i].data(), sends[i].size(), nullptr, &contexts[i])) == -FI_EAGAIN &&
           std::chrono::steady_clock::now() < deadline) {
      std::array<fabric::RailCompletion, 4> done{};
      (void)rail.value()->poll(done);
    }
    if (rc != 0) return Error{fmt::format("inject: fi_tsend returned {}", rc), ""};
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (left < static_cast<int>(sends.size()) && refused.load() < sends.size() &&
         std::chrono::steady_clock::now() < deadline) {
    std::array<fabric::RailCompletion, 4> done{};
    auto n = rail.value()->poll(done);
    if (n) left += static_cast<int>(n.value());
  }
  // The receiver's provider takes them from the socket; keep this endpoint up a moment.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  return left;
}

Result<std::string> run_wrong_key_peer(PeerLaunch launch, FabricConnection& listener, const std::string& join_line) {
  launch.env = {{hw::kJobKeyEnv, fresh_key_hex()}, {hw::kJobKeyFileEnv, std::nullopt}, {hw::kJobAuthEnv, std::nullopt}};
  auto process = start_peer(launch);
  if (!process) return process.error();
  std::optional<std::string> said;
  {
    PeerChannel stranger(process->fd);
    if (!stranger.send_line(join_line)) return Error{"the peer with another key is gone before its case", ""};
    // The listener reads its rails only when progressed (on tcp;ofi_rxm the connect request
    // arrives as the listener reads its CQ).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!said && !stranger.closed() && std::chrono::steady_clock::now() < deadline) {
      listener.progress();
      said = stranger.read_line(std::chrono::milliseconds(0));
    }
  }  // closes the channel: a peer that joined after all reads EOF and exits
  const int code = wait_peer(process->pid);
  const ConnectionStats st = listener.stats();
  if (!said) return Error{fmt::format("the peer with another key said nothing (exit {})", code), ""};
  if (said->rfind("fail ", 0) != 0) return Error{"the peer with another key joined: " + *said, ""};
  if (code != kExitJoinRefused)
    return Error{fmt::format("the peer with another key exited {}, not {}: {}", code, kExitJoinRefused, *said), ""};
  if (st.control_refused == 0 || st.first_control_refusal.find("wrong key") == std::string::npos)
    return Error{fmt::format("the listener refused {} control message(s) ({}), expected its connect request as "
                             "'wrong key'",
                             st.control_refused, st.first_control_refusal),
                 ""};
  if (listener.ready() || listener.failed())
    return Error{
        fmt::format("the listener {} after the stranger's request", listener.ready() ? "became ready" : "failed"), ""};
  return fmt::format(
      "a peer with another job key failed its own join (exit {}: {}); the listener refused {} "
      "control message(s) from it ({})",
      code, said->substr(5), st.control_refused, st.first_control_refusal);
}

int run_join_peer(PeerChannel& host, const FabricOptions& options, const std::vector<std::uint8_t>& handle) {
  std::string why;
  auto c = FabricConnection::connect(options, handle);
  if (!c) {
    why = "connect: " + c.error().message();
  } else {
    // A listener refuses a connect request sealed with another key without a word (it cannot
    // tell a wrong key from a forgery): the answer that never comes is this side's only sign.
    const auto limit =
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(options.tunables.control_timeout);
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!c.value()->ready() && !c.value()->failed() && std::chrono::steady_clock::now() < deadline)
      c.value()->progress();
    if (c.value()->ready()) {
      host.send_line("ok joined");
      while (host.read_line(std::chrono::seconds(1)) || !host.closed()) c.value()->progress();
      return 0;
    }
    why = fmt::format(
        "connect: the listener did not answer within {}{}: a listener refuses a connect request "
        "sealed with another job key; give every rank the same {} (docs/security.md)",
        format_duration(options.tunables.control_timeout), c.value()->failed() ? " (failed)" : "", hw::kJobKeyFileEnv);
  }
  std::fprintf(stderr, "railcheck conform: %s\n", why.c_str());
  host.send_line("fail " + why);
  return kExitJoinRefused;
}

}  // namespace railcheck::conform
