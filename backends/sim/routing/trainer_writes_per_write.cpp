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
    // Writes that landed since the last check first, so memory and the peak are what a
    // per-task writer would have left.
    while (!writes_.empty()) {
      const ssize_t i = sg4::Comm::wait_any_for(writes_, 0);
      if (i < 0) break;
      land(static_cast<std::size_t>(i));
    }
    while (!fits(bytes)) land(static_cast<std::size_t>(sg4::Comm::wait_any(writes_)));
    take(bytes);
  }

  void finish() override {
    while (!writes_.empty()) land(static_cast<std::size_t>(sg4::Comm::wait_any(writes_)));
  }

 private:
  void send(std::size_t task, const routing::WeightWrite& w) override {
    const sg4::Host* to = run_.fabric.nic(run_.trainers + w.rollout_gpu);
    writes_.push_back(sg4::Mailbox::by_name(to->get_name())->put_async(&run_, w.bytes));
    write_task_.push_back(task);
  }

  // writes_[i] has landed.
  void land(std::size_t i) {
    landed(write_task_[i], writes_[i]->get_finish_time());
    writes_[i] = std::move(writes_.back());
    writes_.pop_back();
    write_task_[i] = write_task_.back();
    write_task_.pop_back();
  }

  std::vector<sg4::CommPtr> writes_;     // in flight or landed and not yet taken
  std::vector<std::size_t> write_task_;  // writes_[i] belongs to task write_task_[i]
};

}  // namespace

std::unique_ptr<TrainerWrites> per_write_writes(TransferRun& run, std::uint32_t rank) {
  return std::make_unique<PerWriteWrites>(run, rank);
}

}  // namespace railcheck::sim
