#include "engine/zerobuf/rank_runner.hpp"

#include <fmt/format.h>

#include "engine/core/engine_assert.hpp"

namespace railcheck::zerobuf {

RankRunner::RankRunner(std::uint32_t rank, std::uint32_t nranks, Nanos timeout)
    : rank_(rank), nranks_(nranks), timeout_(timeout) {}

Result<std::uint64_t> RankRunner::start(const CollCall& call, Nanos now) {
  if (state_ != RunnerState::Idle)
    return Error{fmt::format("zerobuf rank {}: {} started while the previous call is {}", rank_, to_string(call.kind),
                             state_ == RunnerState::Failed ? "failed" : "still running"),
                 "a failed communicator must be torn down; calls run one after another"};
  auto prog = build_program(call, rank_, nranks_, next_epoch_);
  if (!prog) return prog.error();
  const std::uint64_t first = next_epoch_;
  next_epoch_ += phases(call.kind);
  call_ = call;
  program_ = std::move(prog.value());
  pc_ = 0;
  state_ = RunnerState::Running;
  wait_since_.reset();
  (void)now;
  advance();
  return first;
}

const FlagStep& RankRunner::step() const {
  RAILCHECK_ASSERT(state_ == RunnerState::Running && pc_ < program_.size(), "only a running call has a step");
  return program_[pc_];
}

void RankRunner::advance() {
  if (state_ == RunnerState::Running && pc_ == program_.size()) {
    state_ = RunnerState::Idle;
    ++calls_done_;
  }
}

void RankRunner::step_done() {
  RAILCHECK_ASSERT(state_ == RunnerState::Running && step().kind != StepKind::Wait,
                   "a write or signal step is done by its runner, a wait by offer()");
  ++pc_;
  advance();
}

bool RankRunner::offer(std::uint64_t observed, Nanos now) {
  RAILCHECK_ASSERT(state_ == RunnerState::Running && step().kind == StepKind::Wait,
                   "a flag value is offered only to a call waiting on a flag");
  if (flag_satisfies(observed, step().epoch)) {
    wait_since_.reset();
    ++pc_;
    advance();
    return true;
  }
  if (!wait_since_) wait_since_ = now;
  if (now - *wait_since_ >= timeout_) time_out(observed, now - *wait_since_);
  return false;
}

void RankRunner::time_out(std::uint64_t observed, Nanos waited) {
  RAILCHECK_ASSERT(state_ == RunnerState::Running && step().kind == StepKind::Wait, "only a wait times out");
  error_ = timeout_error(rank_, call_, calls_done_, step(), pc_, program_.size(), observed, waited);
  state_ = RunnerState::Failed;
}

Error timeout_error(std::uint32_t rank, const CollCall& call, std::uint32_t call_no, const FlagStep& step,
                    std::size_t pc, std::size_t steps, std::uint64_t observed, Nanos waited) {
  return Error{fmt::format("zerobuf rank {}: {} #{} timed out after {} at step {}/{}, {} (the slot holds epoch {}): "
                           "rank {} is dead or stuck",
                           rank, to_string(call.kind), call_no, format_duration(waited), pc + 1, steps, describe(step),
                           observed, step.peer),
               "tear the process group down on every rank (zbccl seed §8.2)"};
}

}  // namespace railcheck::zerobuf
