// jemalloc's options for the executables that link it (railcheck_link_allocator in the top
// CMakeLists.txt), read by jemalloc when it starts: `malloc_conf` is its documented hook.
//
// Never give freed pages back to the kernel (the decay times of dirty and muzzy pages: -1). At
// its defaults jemalloc purges freed memory after 10 s with madvise and the process faults it in
// again: in `sim_scale 1024 8 4` (SimGrid frees and reallocates a comm's objects per packet) that
// was 16 % of the profile in the kernel (page faults, TLB shootdowns from madvise) and 7.1 of its
// 15 CPU seconds were system time; with purging off, 3.8 s (docs/benchmarks.md, 2026-11-29). The
// cost: the peak RSS stays mapped until exit (+4 % at 1024). This is what sim_run.cpp's mallopt
// calls ask of glibc's malloc. Set MALLOC_CONF to override.
extern "C" {
// NOLINTNEXTLINE(cppcoreguidelines-avoid-non-const-global-variables): jemalloc's interface
const char* malloc_conf = "dirty_decay_ms:-1,muzzy_decay_ms:-1";
}
