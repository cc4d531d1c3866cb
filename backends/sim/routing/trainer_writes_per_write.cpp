// PipelineParams::write_queues = PerWrite (trainer_writes.hpp): every write a flow of its own.
// The writes of a task are posted together and left in flight; the GPU takes their completions
// with wait_any when it needs temporary memory back, so memory is returned in the same order and
// at the same instants as when a writer actor per task gave it back on landing: a write's memory
// is counted free from the first check after it lands, and the GPU checks at every task.
#include "backends/sim/routing/trainer_writes.hpp"

namespace sg4 = simgrid::s4u;

namespace railcheck::sim {
namespace {

class PerWriteWrites final : public TrainerWrites {
 public:
  using TrainerWrites::TrainerWrites;

  void hold(std::uint64_t bytes) override {
    take_landed();
    while (!fits(bytes)) land(static_cast<std::size_t>(sg4::Comm::wait_any(writes_)));
    take(bytes);
  }

  bool try_hold(std::uint64_t bytes) override {
    take_landed();
    if (!fits(bytes)) return false;
    take(bytes);
    return true;
  }

  void finish() override {
    while (!writes_.empty()) land(static_cast<std::size_t>(sg4::Comm::wait_any(writes_)));
  }

 private:
  void send(std::size_t task, const routing::WeightWrite& w) override {
    const sg4::Host* to = run_.fabric.nic(run_.trainers + w.rollout_gpu);
    writes_.push_back(sg4::Mailbox::by_name(to->get_name())->put_async(&run_, w.bytes));
    posted_.push_back({task, w});
  }

  // Writes that landed since the last check, so memory and the peak are what a per-task writer
  // would have left.
  void take_landed() {
    while (!writes_.empty()) {
      const ssize_t i = sg4::Comm::wait_any_for(writes_, 0);
      if (i < 0) break;
      land(static_cast<std::size_t>(i));
    }
  }

  // writes_[i] has landed.
  void land(std::size_t i) {
    const Posted& p = posted_[i];
    landed(p.task, writes_[i]->get_finish_time());
    if (run_.timeline != nullptr) {
      const double a = writes_[i]->get_start_time() - run_.start, b = writes_[i]->get_finish_time() - run_.start;
      run_.timeline->sent(rank_, static_cast<double>(p.write.bytes), a, b);
      run_.timeline->received(p.write.rollout_gpu, static_cast<double>(p.write.bytes), a, b);
    }
    writes_[i] = std::move(writes_.back());
    writes_.pop_back();
    posted_[i] = posted_.back();
    posted_.pop_back();
  }

  struct Posted {
    std::size_t task;
    routing::WeightWrite write;
  };
  std::vector<sg4::CommPtr> writes_;  // in flight or landed and not yet taken
  std::vector<Posted> posted_;        // writes_[i] is posted_[i].write, of task posted_[i].task
};

}  // namespace

std::unique_ptr<TrainerWrites> per_write_writes(TransferRun& run, std::uint32_t rank) {
  return std::make_unique<PerWriteWrites>(run, rank);
}

}  // namespace railcheck::sim
