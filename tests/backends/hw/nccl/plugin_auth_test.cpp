// The plugin's control messages under a job key (issue 46), driven through the loaded .so as
// NCCL drives it (plugin_harness.hpp), between forked processes on tcp;ofi_rxm:
//   - a connector with another job's key fails its connect at once with one line (the handle
//     carries the listener's key id); a connector with the right key then connects to the same
//     listen comm and every message arrives intact;
//   - a third process that reaches the receiver's rail and sends it an altered message, a
//     replayed one (a counter the receiver already took), or one of another job, mid-transfer:
//     each is refused and logged once, and every message still arrives intact;
//   - without a key init fails naming the variable; RAILCHECK_JOB_AUTH=off warns.
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <catch2/catch.hpp>

#include "backends/hw/conform/child_process.hpp"
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "backends/hw/libfabric/control_codec.hpp"
#include "backends/hw/libfabric/fabric_rail.hpp"
#include "engine/auth/sealed_channel.hpp"
#include "engine/handshake/handle_codec.hpp"
#include "tests/backends/hw/nccl/plugin_harness.hpp"

using namespace railcheck::nccl_harness;

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kMessages = 40;  // the injector strikes after the first half
constexpr std::size_t kSize = 4096;

std::uint8_t byte_of(int k, std::size_t i) { return static_cast<std::uint8_t>(k * 31 + i * 7 + 1); }

void use_env(const char* key, const char* control_timeout_ms = "10000") {
  ::unsetenv("RAILCHECK_JOB_KEY_FILE");
  ::unsetenv("RAILCHECK_JOB_AUTH");
  ::setenv("RAILCHECK_JOB_KEY", key, 1);
  ::setenv("HA_NCCL_PROVIDER", "tcp;ofi_rxm", 1);
  ::setenv("HA_NCCL_RAIL_ADDRS", "127.0.0.1", 1);
  ::setenv("HA_NCCL_CONTROL_TIMEOUT_MS", control_timeout_ms, 1);
}

// A side in a forked child that SIGALRM kills after 120 s (a hung child never hangs CTest).
pid_t spawn_side(const std::function<int()>& body) { return railcheck::conform::fork_child(body, 120); }
int wait_side_exit(pid_t pid) { return railcheck::conform::wait_child(pid); }

bool read_byte(int fd, char expected) {
  char c = 0;
  return ::read(fd, &c, 1) == 1 && c == expected;
}
void write_byte(int fd, char c) {
  if (::write(fd, &c, 1) != 1) std::_Exit(kExitCallFailed);
}

int failed(const char* what) {
  std::fprintf(stderr, "auth harness: %s\n%s", what, log_text().c_str());
  return kExitCallFailed;
}

bool wait_done(Plugin& p, void* req) {
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  int done = 0;
  while (!done) {
    if (p.test(req, &done, nullptr) != 0 || Clock::now() > deadline) return false;
  }
  return true;
}

// Connects with whatever key the environment holds; sends kMessages, pausing after half of them
// until `resume` says so (the injector's turn). Returns once the receiver has verified all.
int send_all(const std::array<char, abi::kHandleMaxSize>& handle, int paused_out, int resume_in, int done_in) {
  Plugin p(RAILCHECK_NCCL_PLUGIN_PATH, 11);
  if (p.init() != 0) return failed("sender init");
  auto h = handle;
  void* sc = nullptr;
  while (sc == nullptr) {
    if (p.connect(0, h.data(), &sc) != 0) return failed("connect");
  }
  std::vector<std::uint8_t> buf(kSize * kMessages);
  void* mh = nullptr;
  if (p.reg_mr(sc, buf.data(), buf.size(), abi::kPtrHost, &mh) != 0) return failed("regMr");
  for (int k = 0; k < kMessages; ++k) {
    if (k == kMessages / 2) {
      write_byte(paused_out, 'p');
      if (!read_byte(resume_in, 'r')) return failed("resume");
    }
    std::uint8_t* data = buf.data() + static_cast<std::size_t>(k) * kSize;
    for (std::size_t i = 0; i < kSize; ++i) data[i] = byte_of(k, i);
    void* req = nullptr;
    while (req == nullptr) {
      if (p.isend(sc, data, kSize, k, mh, &req) != 0) return failed("isend");
    }
    if (!wait_done(p, req)) return failed("isend never completed");
  }
  if (!read_byte(done_in, 'd')) return failed("receiver done");
  p.dereg_mr(sc, mh);
  p.close_send(sc);
  return kExitOk;
}

// The receiver: listens, hands the handle out on every pipe in `handle_outs`, accepts (the
// connector that can join: the wrong-key one never does), and verifies every message. With
// `expect_refusal`, its log must show one refused control message with that text.
int receive_all(const std::vector<int>& handle_outs, int done_out, const std::string& expect_refusal) {
  Plugin p(RAILCHECK_NCCL_PLUGIN_PATH, 11);
  if (p.init() != 0) return failed("receiver init");
  std::array<char, abi::kHandleMaxSize> handle{};
  void* lc = nullptr;
  if (p.listen(0, handle.data(), &lc) != 0) return failed("listen");
  for (int fd : handle_outs) {
    if (::write(fd, handle.data(), handle.size()) != static_cast<ssize_t>(handle.size())) return failed("handle");
  }
  void* rc = nullptr;
  while (rc == nullptr) {
    if (p.accept(lc, &rc) != 0) return failed("accept");
  }
  std::vector<std::uint8_t> buf(kSize);
  void* mh = nullptr;
  if (p.reg_mr(rc, buf.data(), buf.size(), abi::kPtrHost, &mh) != 0) return failed("regMr");
  for (int k = 0; k < kMessages; ++k) {
    void* data[1] = {buf.data()};
    std::size_t sizes[1] = {kSize};
    int tags[1] = {k};
    void* mhs[1] = {mh};
    void* req = nullptr;
    while (req == nullptr) {
      if (p.irecv(rc, 1, data, sizes, tags, mhs, &req) != 0) return failed("irecv");
    }
    if (!wait_done(p, req)) return failed("irecv never completed");
    for (std::size_t i = 0; i < kSize; ++i) {
      if (buf[i] != byte_of(k, i)) return failed("a message's bytes differ");
    }
  }
  write_byte(done_out, 'd');
  p.dereg_mr(rc, mh);
  p.close_recv(rc);
  p.close_listen(lc);
  const std::string text = log_text();
  std::size_t refusals = 0;
  for (std::size_t at = text.find("refused a control message"); at != std::string::npos;
       at = text.find("refused a control message", at + 1))
    ++refusals;
  if (!expect_refusal.empty() && (refusals != 1 || text.find(expect_refusal) == std::string::npos))
    return failed(("expected one refusal naming '" + expect_refusal + "'").c_str());
  if (expect_refusal.empty() && refusals != 0) return failed("unexpected refusal");
  std::fprintf(stderr, "receiver log:\n%s", text.c_str());
  return kExitOk;
}

enum class Attack { Altered, Replayed, OtherJob };

// A stranger process on the network: its own endpoint, the receiver's rail-0 address from the
// handle, and one tagged message at the control tag.
int inject(const std::array<char, abi::kHandleMaxSize>& handle, Attack attack) {
  const auto* h = reinterpret_cast<const std::uint8_t*>(handle.data());
  const std::span<const std::uint8_t> wire(h, railcheck::kHandleWireSize);
  auto decoded = railcheck::decode_handle(wire);
  if (!decoded) return failed("decode the handle");
  auto rail = railcheck::fabric::FabricRail::open("tcp;ofi_rxm", "127.0.0.1", 64);
  if (!rail) return failed("open a rail");
  if (!rail.value()->insert_peer(decoded.value().handle.primary)) return failed("insert the peer");
  // A well-formed control message (a Ping), sealed as the connecting side (party 0) seals.
  auto plain = railcheck::fabric::encode_control(false, railcheck::Ping{42});
  if (!plain) return failed("encode");
  std::vector<std::uint8_t> bytes = plain.value();
  const std::vector<std::uint8_t> binding(wire.begin(), wire.end());
  const auto key_bytes = [](const char* k) {
    return railcheck::auth::JobKey::from_bytes(
               std::span(reinterpret_cast<const std::uint8_t*>(k), std::strlen(k)))
        .value();
  };
  switch (attack) {
    case Attack::Replayed: {
      // Counter 1, already taken from the connector: what a captured message replayed is to it.
      railcheck::auth::SealedChannel as_connector(key_bytes(kHarnessJobKey), "railcheck control v1", binding, 0, 1);
      as_connector.seal(bytes);
      break;
    }
    case Attack::Altered: {
      railcheck::auth::SealedChannel as_connector(key_bytes(kHarnessJobKey), "railcheck control v1", binding, 0, 1);
      for (int i = 0; i < 500; ++i) {  // a counter the receiver has not seen, then one byte changed
        bytes = plain.value();
        as_connector.seal(bytes);
      }
      bytes[2] ^= 0x01;
      break;
    }
    case Attack::OtherJob: {
      railcheck::auth::SealedChannel other(key_bytes("another job's key, also 32 bytes long"), "railcheck control v1",
                                           binding, 0, 1);
      other.seal(bytes);
      break;
    }
  }
  int context = 0;
  while (rail.value()->tsend(bytes.data(), bytes.size(), nullptr, &context) != 0) {
  }
  std::array<railcheck::fabric::RailCompletion, 4> done{};
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  for (;;) {
    auto n = rail.value()->poll(done);
    if (n && n.value() > 0) break;
    if (Clock::now() > deadline) return failed("the injected message never left");
  }
  // Let the receiver's provider take it before this endpoint closes.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  return kExitOk;
}

// Receiver, sender and injector: the injector strikes when the sender has sent half.
void run_attack(Attack attack, const std::string& expect) {
  int to_sender[2], to_injector[2], paused[2], resume[2], done[2];
  for (int* p : {to_sender, to_injector, paused, resume, done}) REQUIRE(::pipe(p) == 0);
  const pid_t receiver = spawn_side([&] {
    use_env(kHarnessJobKey);
    return receive_all({to_sender[1], to_injector[1]}, done[1], expect);
  });
  const pid_t sender = spawn_side([&] {
    use_env(kHarnessJobKey);
    std::array<char, abi::kHandleMaxSize> h{};
    if (::read(to_sender[0], h.data(), h.size()) != static_cast<ssize_t>(h.size())) return kExitCallFailed;
    return send_all(h, paused[1], resume[0], done[0]);
  });
  const pid_t injector = spawn_side([&] {
    std::array<char, abi::kHandleMaxSize> h{};
    if (::read(to_injector[0], h.data(), h.size()) != static_cast<ssize_t>(h.size())) return kExitCallFailed;
    if (!read_byte(paused[0], 'p')) return kExitCallFailed;
    const int r = inject(h, attack);
    write_byte(resume[1], 'r');
    return r;
  });
  for (int* p : {to_sender, to_injector, paused, resume, done}) ::close(p[0]), ::close(p[1]);
  CHECK(wait_side_exit(injector) == kExitOk);
  CHECK(wait_side_exit(sender) == kExitOk);
  CHECK(wait_side_exit(receiver) == kExitOk);
}

}  // namespace

TEST_CASE("a connector with another job's key fails at once with one line, and the right one joins",
          "[nccl][harness][auth]") {
  int to_stranger[2], to_sender[2], stranger_done[2], paused[2], resume[2], done[2];
  for (int* p : {to_stranger, to_sender, stranger_done, paused, resume, done}) REQUIRE(::pipe(p) == 0);
  const pid_t receiver = spawn_side([&] {
    use_env(kHarnessJobKey);
    return receive_all({to_stranger[1], to_sender[1]}, done[1], "");
  });
  const pid_t stranger = spawn_side([&] {
    use_env("another job's key, also 32 bytes long");
    std::array<char, abi::kHandleMaxSize> h{};
    if (::read(to_stranger[0], h.data(), h.size()) != static_cast<ssize_t>(h.size())) return kExitCallFailed;
    Plugin p(RAILCHECK_NCCL_PLUGIN_PATH, 11);
    if (p.init() != 0) return failed("stranger init");
    void* sc = nullptr;
    int rc = 0;
    rc = p.connect(0, h.data(), &sc);  // fails on the first call: no waiting for a deadline
    write_byte(stranger_done[1], 's');
    if (sc != nullptr || rc == 0) return failed("the connector with another key joined");
    if (!log_has("connect on railcheck0 failed: connect: the listener holds another job key (key id .."))
      return failed("no one-line reason");
    return kExitOk;
  });
  const pid_t sender = spawn_side([&] {
    use_env(kHarnessJobKey);
    std::array<char, abi::kHandleMaxSize> h{};
    if (::read(to_sender[0], h.data(), h.size()) != static_cast<ssize_t>(h.size())) return kExitCallFailed;
    if (!read_byte(stranger_done[0], 's')) return kExitCallFailed;  // after the stranger gave up
    std::thread([&] {
      if (read_byte(paused[0], 'p')) write_byte(resume[1], 'r');  // no injector here
    }).detach();
    return send_all(h, paused[1], resume[0], done[0]);
  });
  for (int* p : {to_stranger, to_sender, stranger_done, paused, resume, done}) ::close(p[0]), ::close(p[1]);
  CHECK(wait_side_exit(stranger) == kExitOk);
  CHECK(wait_side_exit(sender) == kExitOk);
  CHECK(wait_side_exit(receiver) == kExitOk);
}

TEST_CASE("an altered control message mid-transfer is refused and logged once, every message intact",
          "[nccl][harness][auth]") {
  run_attack(Attack::Altered, "bad MAC (forged or altered)");
}

TEST_CASE("a replayed control message mid-transfer is refused and logged once, every message intact",
          "[nccl][harness][auth]") {
  run_attack(Attack::Replayed, "replayed");
}

TEST_CASE("another job's control message mid-transfer is refused and logged once, every message intact",
          "[nccl][harness][auth]") {
  run_attack(Attack::OtherJob, "wrong key");
}

TEST_CASE("without a job key init fails naming the variable, and RAILCHECK_JOB_AUTH=off warns", "[nccl][harness][auth]") {
  const pid_t no_key = spawn_side([] {
    ::unsetenv("RAILCHECK_JOB_KEY");
    ::setenv("RAILCHECK_JOB_KEY_FILE", "/nonexistent/railcheck.key", 1);
    Plugin p(RAILCHECK_NCCL_PLUGIN_PATH, 11);
    if (p.init() == 0) return failed("init succeeded without a key");
    return log_has("init failed: job key file /nonexistent/railcheck.key: open failed") ? kExitOk : kExitLogMissing;
  });
  CHECK(wait_side_exit(no_key) == kExitOk);
  const pid_t off = spawn_side([] {
    ::unsetenv("RAILCHECK_JOB_KEY");
    ::setenv("RAILCHECK_JOB_AUTH", "off", 1);
    ::setenv("HA_NCCL_PROVIDER", "tcp;ofi_rxm", 1);
    Plugin p(RAILCHECK_NCCL_PLUGIN_PATH, 11);
    if (p.init() != 0) return failed("init with auth off");
    return log_has("RAILCHECK_JOB_AUTH=off: control messages between ranks are NOT authenticated") ? kExitOk
                                                                                                        : kExitLogMissing;
  });
  CHECK(wait_side_exit(off) == kExitOk);
}
