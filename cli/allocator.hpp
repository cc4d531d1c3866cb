#pragma once
// Which malloc this process runs on. The model checker copies a world per state, so its speed
// depends on the allocator (docs/benchmarks.md): `railcheck --version` and every benchmark's
// machine line say which one a figure was measured with.
#include <string_view>

namespace railcheck::cli {

// "jemalloc" when jemalloc's malloc is the process's (linked, see RAILCHECK_JEMALLOC in
// CMakeLists.txt, or preloaded); a sanitizer's in a sanitizer build; else "glibc malloc".
std::string_view allocator_name();

}  // namespace railcheck::cli
