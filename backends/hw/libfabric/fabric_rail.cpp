#include "backends/hw/libfabric/fabric_rail.hpp"

#include <fmt/format.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>

#include "backends/hw/libfabric/endpoint_address.hpp"
#include "backends/hw/libfabric/fabric_error.hpp"
#include "backends/hw/libfabric/provider_query.hpp"

namespace railcheck::fabric {
namespace {

// shm's default endpoint name ("fi_shm://<pid>:<uid>:<n>") is longer than the 16 bytes the
// handle carries. "rc<pid>.<n>" in hex is unique per process and endpoint and at most
// 2 + 8 + 1 + 5 = 16 characters for the first 2^20 endpoints.
std::string shm_name() {
  static std::atomic<std::uint32_t> counter{0};
  return fmt::format("rc{:x}.{:x}", static_cast<std::uint32_t>(getpid()), counter.fetch_add(1) & 0xFFFFFU);
}

}  // namespace

FabricRail::~FabricRail() = default;

Error FabricRail::fail(const char* call, long rc) const { return call_error(call, provider_, rc); }

Result<std::unique_ptr<FabricRail>> FabricRail::open(const std::string& provider, const std::string& node,
                                                     std::size_t cq_depth, SendCompletion completion) {
  std::unique_ptr<FabricRail> r(new FabricRail());
  r->provider_ = provider;
  auto info = query_provider(provider, is_shm(provider) ? std::string{} : node);
  if (!info) return info.error();
  r->info_ = std::move(info).value();
  fi_info* fi = r->info_.get();
  // fi_endpoint takes its default tx op flags from here: every send and tagged send of this
  // endpoint completes as asked.
  if (completion == SendCompletion::Local) fi->tx_attr->op_flags = FI_INJECT_COMPLETE;

  fid_fabric* fabric = nullptr;
  if (int rc = fi_fabric(fi->fabric_attr, &fabric, nullptr); rc != 0) return r->fail("fi_fabric", rc);
  r->fabric_.reset(fabric);
  fid_domain* domain = nullptr;
  if (int rc = fi_domain(fabric, fi, &domain, nullptr); rc != 0) return r->fail("fi_domain", rc);
  r->domain_.reset(domain);

  fi_cq_attr cq_attr{};
  cq_attr.format = FI_CQ_FORMAT_DATA;
  cq_attr.wait_obj = FI_WAIT_NONE;  // polled from progress(); nothing ever blocks on it
  cq_attr.size = cq_depth;
  fid_cq* cq = nullptr;
  if (int rc = fi_cq_open(domain, &cq_attr, &cq, nullptr); rc != 0) return r->fail("fi_cq_open", rc);
  r->cq_.reset(cq);

  fi_av_attr av_attr{};
  av_attr.type = FI_AV_TABLE;
  av_attr.count = 4;
  fid_av* av = nullptr;
  if (int rc = fi_av_open(domain, &av_attr, &av, nullptr); rc != 0) return r->fail("fi_av_open", rc);
  r->av_.reset(av);

  fid_ep* ep = nullptr;
  if (int rc = fi_endpoint(domain, fi, &ep, nullptr); rc != 0) return r->fail("fi_endpoint", rc);
  r->ep_.reset(ep);
  if (int rc = fi_ep_bind(ep, &av->fid, 0); rc != 0) return r->fail("fi_ep_bind(av)", rc);
  if (int rc = fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV); rc != 0) return r->fail("fi_ep_bind(cq)", rc);
  if (is_shm(provider)) {
    // shm turns an FI_SOURCE node into "fi_shm://<node>:<uid>:<n>" (too long for the handle);
    // fi_setname before fi_enable names the endpoint's shared-memory region exactly.
    std::string name = shm_name();
    if (int rc = fi_setname(&ep->fid, name.data(), name.size() + 1); rc != 0) return r->fail("fi_setname", rc);
  }
  if (int rc = fi_enable(ep); rc != 0) return r->fail("fi_enable", rc);

  std::vector<std::uint8_t> name(256);
  std::size_t len = name.size();
  if (int rc = fi_getname(&ep->fid, name.data(), &len); rc != 0) return r->fail("fi_getname", rc);
  name.resize(len);
  auto local = encode_endpoint(name, fi->addr_format);
  if (!local) return Error{fmt::format("provider '{}': {}", provider, local.error().what), local.error().hint};
  r->local_ = local.value();
  r->batch_.resize(64);
  r->zero_length_as_byte_ = is_shm(provider) && fi->domain_attr->cq_data_size >= 5;
  return r;
}

Result<bool> FabricRail::insert_peer(const QpEndpoint& remote) {
  if (peer_ && *peer_ == remote) return true;
  auto bytes = decode_endpoint(remote);
  if (!bytes) return bytes.error();
  fi_addr_t addr = FI_ADDR_NOTAVAIL;
  const int n = fi_av_insert(av_.get(), bytes->data(), 1, &addr, 0, nullptr);
  if (n != 1) return fail("fi_av_insert", n < 0 ? n : -FI_EINVAL);
  peer_ = remote;
  peer_addr_ = addr;
  return true;
}

ssize_t FabricRail::send(const void* buf, std::size_t len, void* desc, std::optional<std::uint32_t> imm, void* ctx) {
  if (len == 0 && zero_length_as_byte_) {
    static const std::uint8_t kByte = 0;
    return fi_senddata(ep_.get(), &kByte, 1, nullptr, kZeroLengthFlag | imm.value_or(0), peer_addr_, ctx);
  }
  if (imm) return fi_senddata(ep_.get(), buf, len, desc, *imm, peer_addr_, ctx);
  return fi_send(ep_.get(), buf, len, desc, peer_addr_, ctx);
}

ssize_t FabricRail::recv(void* buf, std::size_t len, void* desc, void* ctx) {
  if (len == 0 && zero_length_as_byte_)
    return fi_recv(ep_.get(), &zero_length_landing_, 1, nullptr, FI_ADDR_UNSPEC, ctx);
  return fi_recv(ep_.get(), buf, len, desc, FI_ADDR_UNSPEC, ctx);
}

ssize_t FabricRail::tsend(const void* buf, std::size_t len, void* desc, void* ctx) {
  return fi_tsend(ep_.get(), buf, len, desc, peer_addr_, kControlTag, ctx);
}

ssize_t FabricRail::trecv(void* buf, std::size_t len, void* desc, void* ctx) {
  return fi_trecv(ep_.get(), buf, len, desc, FI_ADDR_UNSPEC, kControlTag, 0, ctx);
}

ssize_t FabricRail::write(const void* buf, std::size_t len, void* desc, std::optional<std::uint32_t> imm,
                          std::uint64_t remote_addr, std::uint64_t key, void* ctx) {
  if (imm) return fi_writedata(ep_.get(), buf, len, desc, *imm, peer_addr_, remote_addr, key, ctx);
  return fi_write(ep_.get(), buf, len, desc, peer_addr_, remote_addr, key, ctx);
}

ssize_t FabricRail::inject_write(const void* buf, std::size_t len, std::uint32_t imm, std::uint64_t remote_addr,
                                 std::uint64_t key) {
  return fi_inject_writedata(ep_.get(), buf, len, imm, peer_addr_, remote_addr, key);
}

void FabricRail::cancel(void* ctx) { (void)fi_cancel(&ep_->fid, ctx); }

Result<std::size_t> FabricRail::poll(std::span<RailCompletion> out) {
  const std::size_t want = std::min(out.size(), batch_.size());
  const ssize_t n = fi_cq_read(cq_.get(), batch_.data(), want);
  if (n == -FI_EAGAIN) return std::size_t{0};
  if (n == -FI_EAVAIL) {
    fi_cq_err_entry err{};
    const ssize_t e = fi_cq_readerr(cq_.get(), &err, 0);
    if (e == -FI_EAGAIN) return std::size_t{0};
    if (e < 0) return fail("fi_cq_readerr", e);
    const char* text = fi_cq_strerror(cq_.get(), err.prov_errno, err.err_data, error_text_.data(), error_text_.size());
    if (text != nullptr && text != error_text_.data())
      std::snprintf(error_text_.data(), error_text_.size(), "%s", text);
    if (text == nullptr) error_text_[0] = '\0';
    out[0] = RailCompletion{err.op_context, err.flags, err.len, err.data, err.err, error_text_.data()};
    return std::size_t{1};
  }
  if (n < 0) return fail("fi_cq_read", n);
  for (ssize_t i = 0; i < n; ++i) {
    const auto& c = batch_[static_cast<std::size_t>(i)];
    out[static_cast<std::size_t>(i)] = RailCompletion{c.op_context, c.flags, c.len, c.data, 0, ""};
  }
  return static_cast<std::size_t>(n);
}

Result<RailMemory> FabricRail::register_memory(void* addr, std::size_t len) {
  RailMemory m;
  const std::uint64_t access = FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
  // With FI_MR_PROV_KEY the provider picks the key; otherwise keys must be unique per domain.
  const std::uint64_t requested = next_key_++;
  fid_mr* mr = nullptr;
  if (int rc = fi_mr_reg(domain_.get(), addr, len, access, 0, requested, 0, &mr, nullptr); rc != 0)
    return fail("fi_mr_reg", rc);
  m.mr.reset(mr);
  m.desc = fi_mr_desc(mr);
  m.key = fi_mr_key(mr);
  if (m.key == FI_KEY_NOTAVAIL) return fail("fi_mr_key", -FI_ENOKEY);
  m.base = virt_addr() ? reinterpret_cast<std::uint64_t>(addr) : 0;
  return m;
}

}  // namespace railcheck::fabric
