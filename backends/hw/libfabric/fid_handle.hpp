#pragma once
// RAII for libfabric objects: every fid is closed with fi_close exactly once, in reverse order
// of opening (members declared in opening order are destroyed in reverse).
#include <rdma/fabric.h>

#include <memory>

namespace railcheck::fabric {

struct FidCloser {
  template <typename T>
  void operator()(T* f) const {
    if (f != nullptr) fi_close(&f->fid);
  }
};
template <typename T>
using FidHandle = std::unique_ptr<T, FidCloser>;

struct InfoDeleter {
  void operator()(fi_info* i) const { fi_freeinfo(i); }
};
using InfoHandle = std::unique_ptr<fi_info, InfoDeleter>;

}  // namespace railcheck::fabric
