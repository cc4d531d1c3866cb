// The engine's data path allocates nothing per message once warm (issue 32): a driver that keeps
// one Actions buffer pays no heap block for an isend, an irecv or their completions. Counted by
// replacing the global operator new for this test binary; it counts only while a test asks.
//
// Not in the sanitizer builds: ASan and TSan bring their own operator new, and a replacement here
// mixes the two allocators in this binary (ASan reports alloc-dealloc-mismatch at exit and every
// test of the binary fails). The count is checked in the plain build, which CI runs first.
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define RAILCHECK_SANITIZED_ALLOCATOR 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define RAILCHECK_SANITIZED_ALLOCATOR 1
#endif

#if !defined(RAILCHECK_SANITIZED_ALLOCATOR)
#include <catch2/catch.hpp>
#include <cstdlib>
#include <new>
#include <optional>

#include "tests/engine/failover/test_support.hpp"
#include "verify/pair_world.hpp"

namespace {
thread_local bool counting = false;
thread_local std::size_t allocations = 0;
}  // namespace

// gcc 12 sees free() of what it takes for a new-expression's block once both are inlined into a
// caller, and warns (-Wmismatched-new-delete); here the replacement pair is malloc/free by design.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void* operator new(std::size_t n) {
  if (counting) ++allocations;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t /*n*/) noexcept { std::free(p); }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

using namespace railcheck;
using railcheck::verify::PairWorld;

namespace {

template <typename T>
const T* first_of(const Actions& acts) {
  for (const Action& a : acts)
    if (const auto* x = std::get_if<T>(&a)) return x;
  return nullptr;
}

// One 64-byte message through both engines, in one reused buffer; false if any step did not
// produce what a healthy connection must (a post, then the request's completion).
bool one_message(HaConnection& tx, HaConnection& rx, std::uint64_t i, Actions& acts) {
  constexpr MrId kMr{77};
  const Nanos now{1000};
  acts.clear();
  tx.handle(now, UserIsend{RequestId{i}, Sge{0x10000, 64, kMr}, i}, acts);
  const PostSend* send = first_of<PostSend>(acts);
  if (send == nullptr || !send->wr.imm) return false;
  const WrId send_wr = send->wr.id;
  const std::uint32_t imm = *send->wr.imm;
  acts.clear();
  rx.handle(now, UserIrecv{RequestId{i}, {Sge{0x20000, 64, kMr}}, {i}}, acts);
  const PostRecv* recv = first_of<PostRecv>(acts);
  if (recv == nullptr) return false;
  const WrId recv_wr = recv->wr.id;
  acts.clear();
  rx.handle(now, CompletionEvent{PathIndex{0}, recv_wr, WrOpcode::Recv, WcStatus::Success, 64, imm}, acts);
  const CompleteRequest* got = first_of<CompleteRequest>(acts);
  if (got == nullptr || got->request != RequestId{i} || got->sizes.size() != 1 || got->sizes[0] != 64) return false;
  acts.clear();
  tx.handle(now, CompletionEvent{PathIndex{0}, send_wr, WrOpcode::Send, WcStatus::Success, 64, std::nullopt}, acts);
  const CompleteRequest* sent = first_of<CompleteRequest>(acts);
  return sent != nullptr && sent->request == RequestId{i} && sent->outcome == RequestOutcome::Done;
}

}  // namespace

TEST_CASE("a warm connection's isend irecv and completions allocate nothing in the engine", "[failover][alloc]") {
  PairWorld w(test::quiet_tunables(ReplayPolicy::Resync), 1);
  w.handshake();
  HaConnection& tx = w.sender();
  HaConnection& rx = w.receiver();
  Actions acts;
  // Warm-up: the in-flight tables, their indexes and the buffer reach their working size.
  std::uint64_t next = 1000;
  for (int k = 0; k < 64; ++k) REQUIRE(one_message(tx, rx, next++, acts));
  constexpr int kMessages = 1000;
  int ok = 0;
  allocations = 0;
  counting = true;
  for (int k = 0; k < kMessages; ++k) ok += one_message(tx, rx, next++, acts) ? 1 : 0;
  counting = false;
  CHECK(ok == kMessages);
  CHECK(allocations == 0);
  CHECK(tx.inflight() == 0);
  CHECK(rx.inflight() == 0);
  CHECK(rx.delivered() == next - 1000);
}

#endif  // !RAILCHECK_SANITIZED_ALLOCATOR
