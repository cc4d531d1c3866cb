// RcCompletionOrder: RC's completion semantics over a provider that completes out of order,
// after errors, and before delivery (rc_completion_order.hpp). No libfabric here.
#include <catch2/catch.hpp>
#include <vector>

#include "backends/hw/libfabric/rc_completion_order.hpp"

using namespace railcheck;
using railcheck::fabric::RcCompletionOrder;

namespace {

constexpr PathIndex kPath{0};

CompletionEvent success(std::uint64_t wr, WrOpcode op, std::uint32_t len = 8) {
  return CompletionEvent{kPath, WrId{wr}, op, WcStatus::Success, len, std::nullopt};
}

std::vector<std::uint64_t> ids(const std::vector<CompletionEvent>& evs) {
  std::vector<std::uint64_t> out;
  for (const auto& e : evs) out.push_back(e.wr.value);
  return out;
}

std::vector<CompletionEvent> released(RcCompletionOrder& o) {
  std::vector<CompletionEvent> out;
  o.release(out);
  return out;
}

}  // namespace

TEST_CASE("completions go out per queue in posting order, each queue on its own", "[fabric][rc-order]") {
  RcCompletionOrder o;
  o.posted(WrId{1}, WrOpcode::Send);
  o.posted(WrId{2}, WrOpcode::Recv);
  o.posted(WrId{3}, WrOpcode::Send);
  o.posted(WrId{4}, WrOpcode::Recv);
  // rxm: a rendezvous message (3, 4's predecessor) completes after a later eager one.
  o.landed(success(4, WrOpcode::Recv));
  o.landed(success(3, WrOpcode::Send));
  CHECK(released(o).empty());
  o.landed(success(2, WrOpcode::Recv));
  CHECK(ids(released(o)) == std::vector<std::uint64_t>{2, 4});  // send 1 does not hold receives
  o.landed(success(1, WrOpcode::Send));
  CHECK(ids(released(o)) == std::vector<std::uint64_t>{1, 3});
  CHECK(o.empty());
}

TEST_CASE("after an error completion every later one is a flush", "[fabric][rc-order]") {
  RcCompletionOrder o;
  for (std::uint64_t i = 1; i <= 3; ++i) o.posted(WrId{i}, WrOpcode::Recv);
  o.posted(WrId{4}, WrOpcode::Send);
  CompletionEvent bad = success(1, WrOpcode::Recv);
  bad.status = WcStatus::GeneralErr;
  o.landed(bad);
  auto first = released(o);
  REQUIRE(first.size() == 1);
  CHECK(first[0].status == WcStatus::GeneralErr);
  CompletionEvent late = success(2, WrOpcode::Recv, 100);
  late.imm = 7;
  o.landed(late);
  o.landed(success(4, WrOpcode::Send));
  auto rest = released(o);
  REQUIRE(ids(rest) == std::vector<std::uint64_t>{2, 4});
  for (const auto& e : rest) {
    CHECK(e.status == WcStatus::WrFlushErr);
    CHECK(e.byte_len == 0);
    CHECK_FALSE(e.imm);
  }
}

TEST_CASE("a send waiting for its delivery ack is held, and holds later sends", "[fabric][rc-order]") {
  RcCompletionOrder o;
  o.posted(WrId{1}, WrOpcode::Send, 5);
  o.posted(WrId{2}, WrOpcode::Send, 6);
  o.posted(WrId{3}, WrOpcode::Recv);
  o.landed(success(2, WrOpcode::Send));
  o.landed(success(1, WrOpcode::Send));
  o.landed(success(3, WrOpcode::Recv));
  CHECK(ids(released(o)) == std::vector<std::uint64_t>{3});
  CHECK(o.awaiting_ack() == 2);
  o.acknowledged(5);  // the peer has messages < 5: not 5 yet
  CHECK(released(o).empty());
  o.acknowledged(6);
  CHECK(ids(released(o)) == std::vector<std::uint64_t>{1});
  o.acknowledged(4);  // an older ack (another rail) does not move the mark back
  CHECK(released(o).empty());
  CHECK(o.awaiting_ack() == 1);
  o.acknowledged(7);
  CHECK(ids(released(o)) == std::vector<std::uint64_t>{2});
}

TEST_CASE("delivery acks compare sequence numbers as 32-bit serial numbers", "[fabric][rc-order]") {
  RcCompletionOrder o;
  o.posted(WrId{1}, WrOpcode::Send, 0xFFFFFFFFU);
  o.posted(WrId{2}, WrOpcode::Send, 0U);  // message 2^32 on the wire
  o.landed(success(1, WrOpcode::Send));
  o.landed(success(2, WrOpcode::Send));
  o.acknowledged(0xFFFFFFF0ULL);
  CHECK(released(o).empty());
  o.acknowledged(0x1'0000'0000ULL);  // the receiver has everything below 2^32
  CHECK(ids(released(o)) == std::vector<std::uint64_t>{1});
  o.acknowledged(0x1'0000'0001ULL);
  CHECK(ids(released(o)) == std::vector<std::uint64_t>{2});
}

TEST_CASE("a failed send does not wait for an ack", "[fabric][rc-order]") {
  RcCompletionOrder o;
  o.posted(WrId{1}, WrOpcode::Send, 1);
  CompletionEvent bad = success(1, WrOpcode::Send);
  bad.status = WcStatus::RetryExcErr;
  o.landed(bad);
  auto out = released(o);
  REQUIRE(out.size() == 1);
  CHECK(out[0].status == WcStatus::RetryExcErr);
}

TEST_CASE("at ERR the deliverable prefix goes as it is and everything else flushes in order", "[fabric][rc-order]") {
  RcCompletionOrder o;
  o.posted(WrId{1}, WrOpcode::Recv);
  o.posted(WrId{2}, WrOpcode::Recv);
  o.posted(WrId{3}, WrOpcode::Recv);
  o.posted(WrId{4}, WrOpcode::Send, 10);
  o.posted(WrId{5}, WrOpcode::Send, 11);
  o.posted(WrId{6}, WrOpcode::Send);
  CompletionEvent r1 = success(1, WrOpcode::Recv, 64);
  r1.imm = 0;
  o.landed(r1);  // held only because release() was not called: still deliverable
  o.landed(success(3, WrOpcode::Recv));  // behind a hole (2): the engine would see a gap
  o.landed(success(4, WrOpcode::Send));  // no ack yet: the peer may not have it
  std::vector<CompletionEvent> out;
  o.fail(kPath, WcStatus::RetryExcErr, out);
  REQUIRE(ids(out) == std::vector<std::uint64_t>{1, 2, 3, 4, 5, 6});
  CHECK(out[0].status == WcStatus::Success);
  CHECK(out[0].byte_len == 64);
  CHECK(out[0].imm == std::optional<std::uint32_t>{0});
  CHECK(out[1].status == WcStatus::RetryExcErr);
  for (std::size_t i = 2; i < out.size(); ++i) {
    CHECK(out[i].status == WcStatus::WrFlushErr);
    CHECK(out[i].opcode == (i < 3 ? WrOpcode::Recv : WrOpcode::Send));
  }
  CHECK(o.empty());
}

TEST_CASE("at ERR acknowledged sends complete as they are", "[fabric][rc-order]") {
  RcCompletionOrder o;
  o.posted(WrId{1}, WrOpcode::Send, 3);
  o.posted(WrId{2}, WrOpcode::Send, 4);
  o.landed(success(1, WrOpcode::Send));
  o.landed(success(2, WrOpcode::Send));
  o.acknowledged(4);  // covers 3 only
  std::vector<CompletionEvent> out;
  o.fail(kPath, WcStatus::WrFlushErr, out);
  REQUIRE(out.size() == 2);
  CHECK(out[0].status == WcStatus::Success);
  CHECK(out[1].status == WcStatus::WrFlushErr);
}

TEST_CASE("a refused post is forgotten and unknown completions are ignored", "[fabric][rc-order]") {
  RcCompletionOrder o;
  o.posted(WrId{1}, WrOpcode::Recv);
  o.posted(WrId{2}, WrOpcode::Recv);
  o.forget(WrId{1});
  o.landed(success(9, WrOpcode::Recv));  // flushed earlier: not ours any more
  o.landed(success(2, WrOpcode::Recv));
  CHECK(ids(released(o)) == std::vector<std::uint64_t>{2});
  CHECK(o.empty());
}
