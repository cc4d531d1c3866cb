// PipelineParams::write_queues = PerPeer (trainer_writes.hpp): one RC queue pair per (trainer
// GPU, rollout GPU), its writes on the wire one at a time in the order posted.
//
// Each queue pair that ever carries a write has an actor on the trainer's NIC host: it takes the
// next write from its queue, puts it to the rollout NIC's permanent receiver (a blocking put, so
// it resumes at the landing), and gives the task's memory back when that was the task's last
// write. A queue pair therefore starts its next write at the instant the previous one lands; each
// write still pays the route's latency, where a real NIC would stream the next work request's
// packets behind the last one's (a few microseconds per write, against hundreds for the bytes of
// a tensor; other queue pairs of the same NIC use the bandwidth meanwhile).
//
// Why this and not PerWrite: the fabric shares bandwidth among what it sees as flows, and a queue
// pair is one flow whatever the depth of its send queue. With PerWrite a trainer that has posted
// ten writes to a rollout GPU takes ten shares of that GPU's NIC from a trainer that has posted
// one. It also keeps the solver small: SimGrid re-solves the bandwidth sharing of every flow in
// flight at each start and landing, and Kimi-K2 as shipped has ~7 300 writes in flight on average
// but only ~700 distinct (trainer, rollout) pairs (measured 2026-11-25).
#include <deque>
#include <map>
#include <mutex>

#include "backends/sim/routing/trainer_writes.hpp"

namespace sg4 = simgrid::s4u;

namespace railcheck::sim {
namespace {

class PerPeerWrites final : public TrainerWrites {
 public:
  using TrainerWrites::TrainerWrites;

  void hold(std::uint64_t bytes) override {
    std::unique_lock lock(*memory_mutex_);
    while (!fits(bytes)) memory_freed_->wait(lock);
    take(bytes);
  }

  bool try_hold(std::uint64_t bytes) override {
    std::unique_lock lock(*memory_mutex_);
    if (!fits(bytes)) return false;
    take(bytes);
    return true;
  }

  void finish() override {
    for (auto& [rollout, qp] : queue_pairs_) qp.posted->release();  // wakes an idle actor to leave
  }

 private:
  void send(std::size_t task, const routing::WeightWrite& w) override {
    QueuePair& qp = queue_pair(w.rollout_gpu);
    qp.send_queue.push_back({w.bytes, task});
    qp.posted->release();
  }

  struct Posted {
    std::uint64_t bytes;
    std::size_t task;
  };
  struct QueuePair {
    std::deque<Posted> send_queue;
    sg4::SemaphorePtr posted;  // one release per posted write, one more at finish()
  };

  QueuePair& queue_pair(std::uint32_t rollout_gpu) {
    auto [it, fresh] = queue_pairs_.try_emplace(rollout_gpu);
    if (fresh) {
      QueuePair& qp = it->second;
      qp.posted = sg4::Semaphore::create(0);
      sg4::Host* nic = run_.fabric.nic(rank_);
      sg4::Mailbox* remote = sg4::Mailbox::by_name(run_.fabric.nic(run_.trainers + rollout_gpu)->get_name());
      sg4::Actor::create(nic->get_name() + "-qp" + std::to_string(rollout_gpu), nic,
                         [this, &qp, remote, rollout_gpu] { drive(qp, remote, rollout_gpu); });
    }
    return it->second;
  }

  void drive(QueuePair& qp, sg4::Mailbox* remote, std::uint32_t rollout_gpu) {
    for (;;) {
      qp.posted->acquire();
      if (qp.send_queue.empty()) return;  // finish() and nothing left
      const Posted w = qp.send_queue.front();
      qp.send_queue.pop_front();
      const double t0 = sg4::Engine::get_clock();
      remote->put(&run_, w.bytes);
      if (run_.timeline != nullptr) record(w.bytes, rollout_gpu, t0);
      if (landed(w.task, sg4::Engine::get_clock())) memory_freed_->notify_all();
    }
  }

  // A write that went on the wire at `t0` and landed now, on both NICs' timelines.
  void record(std::uint64_t bytes, std::uint32_t rollout_gpu, double t0) {
    const double a = t0 - run_.start, b = sg4::Engine::get_clock() - run_.start;
    run_.timeline->sent(rank_, static_cast<double>(bytes), a, b);
    run_.timeline->received(rollout_gpu, static_cast<double>(bytes), a, b);
  }

  std::map<std::uint32_t, QueuePair> queue_pairs_;  // by rollout GPU; nodes stay put for the actors
  sg4::MutexPtr memory_mutex_ = sg4::Mutex::create();
  sg4::ConditionVariablePtr memory_freed_ = sg4::ConditionVariable::create();
};

}  // namespace

std::unique_ptr<TrainerWrites> per_peer_writes(TransferRun& run, std::uint32_t rank) {
  return std::make_unique<PerPeerWrites>(run, rank);
}

}  // namespace railcheck::sim
