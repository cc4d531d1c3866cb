#include "backends/hw/cuda/zerobuf/communicator.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <variant>

#include "backends/hw/bootstrap/tcp_bootstrap.hpp"
#include "backends/hw/cuda/zerobuf/window_handle.hpp"

namespace railcheck::hw::zerobuf {
namespace {

using namespace railcheck::zerobuf;

constexpr std::size_t kHistory = 64;  // calls remembered for a timeout's message

Error cuda_failed(const std::string& call, cudaError_t e, std::string hint = {}) {
  return Error{fmt::format("zerobuf: {} failed: {} ({})", call, cudaGetErrorName(e), cudaGetErrorString(e)),
               std::move(hint)};
}

// Input and output bytes of one rank's buffers for a call of `bytes` (CollCall's meaning).
std::pair<std::uint64_t, std::uint64_t> buffer_bytes(CollKind k, std::uint64_t bytes, std::uint32_t n) {
  switch (k) {
    case CollKind::AllGather: return {bytes, n * bytes};
    case CollKind::ReduceScatter: return {n * bytes, bytes};
    case CollKind::AllToAll: return {n * bytes, n * bytes};
    default: return {bytes, bytes};
  }
}

}  // namespace

Communicator::Communicator(const CommOptions& o, WindowLayout layout, VmmWindow own, SmaAllocator sma)
    : opt_(o),
      layout_(std::move(layout)),
      own_(std::move(own)),
      sma_(std::move(sma)),
      runner_(o.rank, o.nranks, o.timeout) {}

Result<std::unique_ptr<Communicator>> Communicator::create(const CommOptions& o) {
  if (o.nranks == 0 || o.nranks > kMaxRanks || o.rank >= o.nranks)
    return Error{fmt::format("zerobuf: rank {} of {} ranks", o.rank, o.nranks),
                 fmt::format("0 <= rank < nranks <= {}", kMaxRanks)};
  if (o.timeout <= Nanos{0}) return Error{"zerobuf: a flag timeout of 0", "give a positive timeout (seed §8.2)"};
  if (cudaError_t e = cudaSetDevice(o.device); e != cudaSuccess)
    return cuda_failed(fmt::format("cudaSetDevice({})", o.device), e);
  if (cudaError_t e = cudaFree(nullptr); e != cudaSuccess) return cuda_failed("cudaFree(0) (creating the context)", e);
  int coop = 0, sms = 0;
  if (cudaError_t e = cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, o.device); e != cudaSuccess)
    return cuda_failed("cudaDeviceGetAttribute(cudaDevAttrCooperativeLaunch)", e);
  if (!coop) return Error{fmt::format("zerobuf: device {} has no cooperative launch", o.device), "use sm_60 or newer"};
  if (cudaError_t e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, o.device); e != cudaSuccess)
    return cuda_failed("cudaDeviceGetAttribute(cudaDevAttrMultiProcessorCount)", e);

  auto granularity = vmm_granularity(o.device);
  if (!granularity) return granularity.error();
  auto layout = plan_window(o.sma, granularity.value(), o.nranks);
  if (!layout) return layout.error();
  auto own = VmmWindow::create(o.device, layout->window_bytes);
  if (!own) return own.error();
  // Zeroed before the blob leaves: epoch 0 means "never posted" (flag_step.hpp).
  if (cudaError_t e = cudaMemset(reinterpret_cast<void*>(own->base()), 0, layout->flag_area_bytes); e != cudaSuccess)
    return cuda_failed("cudaMemset(flag area)", e);
  if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess)
    return cuda_failed("cudaDeviceSynchronize(after zeroing the flag area)", e);
  auto uuid = device_uuid(o.device);
  if (!uuid) return uuid.error();

  WindowHandle mine;
  mine.rank = o.rank;
  mine.nranks = o.nranks;
  mine.pid = static_cast<std::uint32_t>(::getpid());
  mine.fd = static_cast<std::uint32_t>(own->exported_fd());
  mine.window_bytes = own->bytes();
  mine.flag_area_bytes = layout->flag_area_bytes;
  mine.device_uuid = uuid.value();
  hw::BootstrapConfig bc;
  bc.root_address = o.root_address;
  bc.rank = o.rank;
  bc.nranks = o.nranks;
  if (o.run_id != 0) bc.run_id = o.run_id;
  bc.timeout = o.bootstrap_timeout;
  auto blobs = hw::run_bootstrap(bc, encode(mine));
  if (!blobs) return Error{"zerobuf bootstrap: " + blobs.error().what, blobs.error().hint};
  auto handles = decode_peer_handles(blobs->blobs, o.rank);
  if (!handles) return handles.error();

  auto sma = SmaAllocator::create(layout->sma);
  if (!sma) return sma.error();
  std::unique_ptr<Communicator> c(new Communicator(o, layout.value(), std::move(own.value()), std::move(sma.value())));
  c->multiprocessors_ = sms;
  c->peers_.reserve(o.nranks);
  for (std::uint32_t r = 0; r < o.nranks; ++r) {
    if (r == o.rank) {
      c->peers_.emplace_back(std::nullopt);
      c->bases_.push_back(reinterpret_cast<char*>(c->own_.base()));
      continue;
    }
    auto w = VmmWindow::import(o.device, handles.value()[r]);
    if (!w) return w.error();
    c->bases_.push_back(reinterpret_cast<char*>(w->base()));
    c->peers_.push_back(std::move(w.value()));
  }
  if (cudaError_t e = cudaMalloc(&c->scratch_, sizeof(DeviceScratch)); e != cudaSuccess)
    return cuda_failed("cudaMalloc(scratch)", e);
  if (cudaError_t e = cudaMemset(c->scratch_, 0, sizeof(DeviceScratch)); e != cudaSuccess)
    return cuda_failed("cudaMemset(scratch)", e);
  if (cudaError_t e = cudaHostAlloc(&c->record_, sizeof(TimeoutRecord), cudaHostAllocMapped); e != cudaSuccess)
    return cuda_failed("cudaHostAlloc(timeout record, mapped)", e);
  std::memset(c->record_, 0, sizeof(TimeoutRecord));
  if (cudaError_t e = cudaHostGetDevicePointer(&c->record_dev_, c->record_, 0); e != cudaSuccess)
    return cuda_failed("cudaHostGetDevicePointer(timeout record)", e);
  if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) return cuda_failed("cudaDeviceSynchronize", e);
  return c;
}

// Waits for queued kernels (a stuck one ends at its timeout), then unmaps the peers' windows
// and its own. A peer that still maps this window keeps its memory alive until it tears down.
Communicator::~Communicator() {
  cudaDeviceSynchronize();
  for (auto& [id, ev] : events_) cudaEventDestroy(ev);
  if (scratch_) cudaFree(scratch_);
  if (record_) cudaFreeHost(record_);
  peers_.clear();
}

void Communicator::settle_events() {
  for (auto it = events_.begin(); it != events_.end();) {
    if (cudaEventQuery(it->second) == cudaSuccess) {
      sma_.event_done(it->first);
      cudaEventDestroy(it->second);
      it = events_.erase(it);
    } else {
      ++it;  // not ready (or broken): the block stays fenced off from other streams
    }
  }
  (void)cudaGetLastError();  // cudaErrorNotReady is sticky in the last-error slot
}

Result<void*> Communicator::alloc(std::uint64_t bytes, cudaStream_t stream) {
  settle_events();
  auto a = sma_.malloc(bytes, reinterpret_cast<StreamId>(stream));
  if (!a) return a.error();
  (void)sma_.drain();  // MapSegment: the whole window is already mapped (window_layout.hpp)
  return static_cast<void*>(reinterpret_cast<char*>(own_.base()) + a->offset);
}

Result<bool> Communicator::free(void* ptr) {
  auto off = window_offset(own_.base(), layout_.window_bytes, reinterpret_cast<std::uintptr_t>(ptr), 0, "freed block");
  if (!off) return off.error();
  auto done = sma_.free(off.value());
  if (!done) return done.error();
  for (const SmaAction& a : sma_.drain()) {
    const auto* rec = std::get_if<RecordEvent>(&a);
    if (!rec) continue;  // UnmapSegment: the pages stay mapped with the window
    cudaEvent_t ev = nullptr;
    if (cudaError_t e = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming); e != cudaSuccess)
      return cuda_failed("cudaEventCreateWithFlags", e);
    if (cudaError_t e = cudaEventRecord(ev, reinterpret_cast<cudaStream_t>(rec->stream)); e != cudaSuccess) {
      cudaEventDestroy(ev);
      return cuda_failed(fmt::format("cudaEventRecord(stream {:#x})", rec->stream), e);
    }
    events_[rec->event] = ev;
  }
  return true;
}

Result<bool> Communicator::check() {
  if (failed_) return *failed_;
  if (*reinterpret_cast<volatile std::uint32_t*>(&record_->state) != 2) return true;
  const TimeoutRecord r = *record_;
  auto it = history_.find(r.call_no);
  if (it == history_.end() || r.pc >= it->second.second.size()) {
    failed_ = Error{fmt::format("zerobuf rank {}: call #{} timed out at step {} (the slot holds epoch {})", opt_.rank,
                                r.call_no, r.pc + 1, r.observed),
                    "tear the process group down on every rank (zbccl seed §8.2)"};
  } else {
    const auto& [call, program] = it->second;
    failed_ = timeout_error(opt_.rank, call, static_cast<std::uint32_t>(r.call_no), program[r.pc], r.pc, program.size(),
                            r.observed, Nanos{static_cast<std::int64_t>(r.waited_ns)});
  }
  return *failed_;
}

Result<bool> Communicator::run(CollKind kind, const void* input, void* output, std::uint64_t bytes,
                               cudaStream_t stream) {
  if (auto ok = check(); !ok) return ok.error();
  const auto [in_bytes, out_bytes] = buffer_bytes(kind, bytes, opt_.nranks);
  const auto base = static_cast<std::uintptr_t>(own_.base());
  auto in = window_offset(base, layout_.window_bytes, reinterpret_cast<std::uintptr_t>(input), in_bytes, "input");
  if (!in) return in.error();
  auto out = window_offset(base, layout_.window_bytes, reinterpret_cast<std::uintptr_t>(output), out_bytes, "output");
  if (!out) return out.error();
  CollCall call;
  call.kind = kind;
  call.input_offset = in.value();
  call.output_offset = out.value();
  call.bytes = bytes;
  // The model's runner hands out the epochs and the program; the device executes it, so the
  // runner is stepped through it here as the kernel will (every wait satisfied). A timeout on the
  // device is reported by check() instead.
  auto started = runner_.start(call, Nanos{0});
  if (!started) return started.error();
  const std::vector<FlagStep> program = runner_.program();
  while (runner_.state() == RunnerState::Running) {
    if (runner_.step().kind == StepKind::Wait)
      (void)runner_.offer(runner_.step().epoch, Nanos{0});
    else
      runner_.step_done();
  }
  if (program.size() > kMaxSteps)
    return Error{fmt::format("zerobuf {}: {} steps, the kernel takes {}", to_string(kind), program.size(), kMaxSteps),
                 "fewer ranks"};
  DeviceProgram dp;
  std::copy(program.begin(), program.end(), dp.steps);
  dp.nsteps = static_cast<std::uint32_t>(program.size());
  std::uint64_t most = 0;
  for (const FlagStep& s : program) most = std::max(most, s.bytes);
  KernelArgs args;
  args.local = reinterpret_cast<char*>(own_.base());
  for (std::uint32_t r = 0; r < opt_.nranks; ++r) args.peers[r] = bases_[r];
  args.rank = opt_.rank;
  args.nranks = opt_.nranks;
  args.timeout_ns = static_cast<std::uint64_t>(opt_.timeout.count());
  args.call_no = calls_;
  args.scratch = scratch_;
  args.record = record_dev_;
  const int blocks = program_blocks(most, multiprocessors_);
  if (cudaError_t e = launch_program(dp, args, blocks, stream); e != cudaSuccess)
    return cuda_failed(fmt::format("cudaLaunchCooperativeKernel({} #{}, {} blocks)", to_string(kind), calls_, blocks),
                       e);
  history_[calls_] = {call, program};
  if (history_.size() > kHistory) history_.erase(history_.begin());
  ++calls_;
  return true;
}

}  // namespace railcheck::hw::zerobuf
