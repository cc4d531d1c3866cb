#include "backends/hw/cuda/zerobuf/communicator.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <string_view>
#include <variant>

#include "backends/hw/auth/job_key_source.hpp"
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
  // The LL slots hold the largest one-shot piece and the largest two-shot part.
  const std::uint64_t ll_slot_bytes =
      std::max<std::uint64_t>({4, ll_max_piece(o.fast.ll_max_send_bytes, o.nranks),
                               8 * ll_two_shot_slot_lines(o.fast.ll_two_shot_max_bytes, o.nranks)});
  auto layout = plan_window(o.sma, granularity.value(), o.nranks, o.fast.enabled ? ll_slot_bytes : 0);
  if (!layout) return layout.error();
  auto own = VmmWindow::create(o.device, layout->window_bytes);
  if (!own) return own.error();
  // Zeroed before the blob leaves: epoch 0 means "never posted" (flag_step.hpp, fast_path.hpp).
  if (cudaError_t e = cudaMemset(reinterpret_cast<void*>(own->base()), 0, layout->front_used_bytes); e != cudaSuccess)
    return cuda_failed("cudaMemset(flag, barrier and LL areas)", e);
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
  // The job key the launcher gave every rank, or an explicit RAILCHECK_JOB_AUTH=off (which the
  // bootstrap logs as a warning): docs/security.md.
  auto key = hw::job_key_from_environment();
  if (!key) return Error{"zerobuf bootstrap: " + key.error().what, key.error().hint};
  bc.key = std::move(key.value().key);
  bc.allow_unauthenticated = key.value().off;
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
  if (cudaError_t e = cudaMalloc(&c->fast_state_, sizeof(FastState)); e != cudaSuccess)
    return cuda_failed("cudaMalloc(fast-path state)", e);
  if (cudaError_t e = cudaMemset(c->fast_state_, 0, sizeof(FastState)); e != cudaSuccess)
    return cuda_failed("cudaMemset(fast-path state)", e);
  c->opt_.direct_max_blocks = std::min(o.direct_max_blocks, sms);
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
  if (fast_state_) cudaFree(fast_state_);
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
  if (r.path != static_cast<std::uint32_t>(FastPath::Program)) {
    failed_ = fast_timeout_error(r);
    return *failed_;
  }
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

namespace {

std::optional<FastOp> fast_op(CollKind k) {
  switch (k) {
    case CollKind::AllGather: return FastOp::AllGather;
    case CollKind::ReduceScatter: return FastOp::ReduceScatter;
    case CollKind::AllReduce: return FastOp::AllReduce;
    case CollKind::AllToAll: return FastOp::AllToAll;
    default: return std::nullopt;
  }
}

std::string_view path_name(FastPath p) {
  switch (p) {
    case FastPath::Ll: return "LL";
    case FastPath::Direct: return "direct";
    case FastPath::LlTwoShot: return "LL two-shot";
    default: return "flag-program";
  }
}

}  // namespace

FastPath Communicator::path_for(CollKind kind, const void* input, const void* output, std::uint64_t bytes) const {
  const auto op = fast_op(kind);
  if (!op) return FastPath::Program;
  const auto in = reinterpret_cast<std::uintptr_t>(input), out = reinterpret_cast<std::uintptr_t>(output);
  FastPath p = choose_path(*op, bytes, opt_.nranks, ((in | out) & 15) == 0, opt_.fast);
  if ((p == FastPath::Ll || p == FastPath::LlTwoShot) && ((in | out) & 3) != 0)
    p = FastPath::Program;  // LL moves 4-byte words
  return p;
}

Error Communicator::fast_timeout_error(const TimeoutRecord& r) const {
  const auto op = to_string(static_cast<CollKind>(r.op));
  const auto path = path_name(static_cast<FastPath>(r.path));
  return Error{
      fmt::format("zerobuf rank {}: {} ({} path) timed out after {:.3g} s waiting for rank {} (epoch {}, the "
                  "slot holds {}): rank {} is dead or stuck",
                  opt_.rank, op, path, static_cast<double>(r.waited_ns) / 1e9, r.peer, r.expected, r.observed, r.peer),
      "tear the process group down on every rank (zbccl seed §8.2)"};
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
  const FastPath path = path_for(kind, input, output, bytes);
  if (path != FastPath::Program) return run_fast(path, *fast_op(kind), in.value(), out.value(), bytes, stream);
  return run_program(kind, in.value(), out.value(), bytes, stream);
}

Result<bool> Communicator::run_fast(FastPath path, FastOp op, std::uint64_t in, std::uint64_t out, std::uint64_t bytes,
                                    cudaStream_t stream) {
  FastArgs a;
  a.op = op;
  a.rank = opt_.rank;
  a.nranks = opt_.nranks;
  a.bytes = bytes;
  a.local = reinterpret_cast<char*>(own_.base());
  for (std::uint32_t r = 0; r < opt_.nranks; ++r) a.peers[r] = bases_[r];
  a.input_offset = in;
  a.output_offset = out;
  a.ll_area_offset = layout_.ll_area_offset;
  a.ll_slot_lines = layout_.ll_slot_lines;
  a.barrier_area_offset = layout_.barrier_area_offset;
  a.timeout_ns = static_cast<std::uint64_t>(opt_.timeout.count());
  a.scratch = scratch_;
  a.record = record_dev_;
  a.state = fast_state_;
  const std::uint64_t ll_piece = path == FastPath::LlTwoShot ? ll_two_shot_part(bytes, 0, opt_.nranks).bytes : bytes;
  const int threads = ll_threads(ll_piece, multiprocessors_, opt_.ll_threads);
  const int blocks = path == FastPath::Direct
                         ? direct_blocks(op, bytes, opt_.nranks, opt_.direct_max_blocks, opt_.direct_units_per_thread)
                         : ll_blocks(ll_piece, multiprocessors_, threads);
  const cudaError_t e = path == FastPath::Ll          ? launch_ll(a, blocks, threads, stream)
                        : path == FastPath::LlTwoShot ? launch_ll_two_shot(a, blocks, threads, stream)
                                                      : launch_direct(a, blocks, stream);
  if (e != cudaSuccess)
    return cuda_failed(fmt::format("launching the {} kernel ({}, {} B, {} blocks)", path_name(path),
                                   to_string(static_cast<CollKind>(op)), bytes, blocks),
                       e);
  ++calls_;
  return true;
}

Result<bool> Communicator::run_program(CollKind kind, std::uint64_t in, std::uint64_t out, std::uint64_t bytes,
                                       cudaStream_t stream) {
  // The flag program's epochs are kernel parameters chosen here: a graph would replay them stale.
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  if (cudaError_t e = cudaStreamIsCapturing(stream, &capture); e != cudaSuccess)
    return cuda_failed("cudaStreamIsCapturing", e);
  if (capture != cudaStreamCaptureStatusNone)
    return Error{fmt::format("zerobuf {} of {} B: this call takes the flag-program path, which a CUDA graph cannot "
                             "capture (its epochs are chosen on the host per call)",
                             to_string(kind), bytes),
                 "graph-capture only calls the fast paths take: 4-byte multiples up to the LL limit, or 16-byte "
                 "aligned buffers and sizes (docs/zerobuf.md)"};
  CollCall call;
  call.kind = kind;
  call.input_offset = in;
  call.output_offset = out;
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
