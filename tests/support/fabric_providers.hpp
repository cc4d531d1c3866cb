#pragma once
// The libfabric providers every machine here runs (docs/hardware.md): TCP through ofi_rxm, and
// shared memory. The libfabric tests run each case over both.
namespace railcheck::test {

inline constexpr const char* kLoopbackProviders[] = {"tcp;ofi_rxm", "shm"};

}  // namespace railcheck::test
