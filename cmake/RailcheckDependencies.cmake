# Finds every third-party library railcheck uses, and when one is missing says which Debian
# package provides it (scripts/install-deps.sh installs them all).

function(railcheck_missing what debian_package)
  message(FATAL_ERROR
    "railcheck: ${what} not found.\n"
    "  Install it with:  apt-get install -y ${debian_package}\n"
    "  (or run scripts/install-deps.sh, which installs every dependency)")
endfunction()

find_package(fmt QUIET)
if(NOT fmt_FOUND)
  railcheck_missing("fmt" "libfmt-dev")
endif()
find_package(nlohmann_json 3 QUIET)
if(NOT nlohmann_json_FOUND)
  railcheck_missing("nlohmann-json" "nlohmann-json3-dev")
endif()
find_package(tomlplusplus QUIET)
if(NOT tomlplusplus_FOUND)
  railcheck_missing("toml++" "libtomlplusplus-dev")
endif()
find_package(CLI11 QUIET)
if(NOT CLI11_FOUND)
  railcheck_missing("CLI11" "libcli11-dev")
endif()
find_package(Boost 1.74 QUIET COMPONENTS graph)
if(NOT Boost_FOUND)
  railcheck_missing("Boost.Graph" "libboost-graph-dev")
endif()

find_package(PkgConfig QUIET)
if(NOT PkgConfig_FOUND)
  railcheck_missing("pkg-config" "pkg-config")
endif()
pkg_check_modules(SIMGRID QUIET IMPORTED_TARGET simgrid>=3.32)
if(NOT SIMGRID_FOUND)
  railcheck_missing("SimGrid >= 3.32" "libsimgrid-dev")
endif()

if(RAILCHECK_BUILD_TESTS)
  find_package(Catch2 2 QUIET)
  if(NOT Catch2_FOUND)
    railcheck_missing("Catch2" "catch2")
  endif()
endif()

# Hardware backends. rdma-core and libfabric are required to build (the code must compile and
# link everywhere, CI included); they only need a device or provider at run time.
pkg_check_modules(LIBFABRIC QUIET IMPORTED_TARGET libfabric>=1.17)
if(NOT LIBFABRIC_FOUND)
  railcheck_missing("libfabric >= 1.17" "libfabric-dev")
endif()
# libfabric's headers only: the library itself is loaded on first use
# (backends/hw/libfabric/libfabric_loader.cpp says why), so no target links it.
add_library(railcheck_libfabric_headers INTERFACE)
target_include_directories(railcheck_libfabric_headers SYSTEM INTERFACE ${LIBFABRIC_INCLUDE_DIRS})
target_compile_options(railcheck_libfabric_headers INTERFACE ${LIBFABRIC_CFLAGS_OTHER})
target_link_libraries(railcheck_libfabric_headers INTERFACE ${CMAKE_DL_LIBS})
pkg_check_modules(IBVERBS QUIET IMPORTED_TARGET libibverbs)
if(NOT IBVERBS_FOUND)
  railcheck_missing("libibverbs (rdma-core)" "libibverbs-dev")
endif()
pkg_check_modules(RDMACM QUIET IMPORTED_TARGET librdmacm)
if(NOT RDMACM_FOUND)
  railcheck_missing("librdmacm (rdma-core)" "librdmacm-dev")
endif()
# The netns lab's delay faults (backends/hw/conform/packet_delayer): packets held in user space
# through an NFQUEUE rule, since sch_netem is not built into every kernel (this VM's is not).
pkg_check_modules(NFQUEUE QUIET IMPORTED_TARGET libnetfilter_queue)
if(NOT NFQUEUE_FOUND)
  railcheck_missing("libnetfilter_queue" "libnetfilter-queue-dev")
endif()
find_package(Threads REQUIRED)
# libcrypto (OpenSSL 3): HMAC-SHA-256 for the authenticated bootstrap and plugin control
# messages (engine/auth, docs/security.md). A system library on Debian 12 and Ubuntu 24.04
# (libcrypto.so.3), so the NCCL plugin may link it.
find_package(OpenSSL 3 QUIET COMPONENTS Crypto)
if(NOT OpenSSL_FOUND)
  railcheck_missing("OpenSSL 3 libcrypto" "libssl-dev")
endif()

# OpenMPI: `railcheck sweep` under mpirun. Optional: without it the sweep runs shards by hand.
find_package(MPI QUIET COMPONENTS CXX)

# CUDA (backends/hw/cuda): built where nvcc exists (/usr/local/cuda on these machines); the
# host-side proxy logic builds and is tested without it.
include(CheckLanguage)
if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
  set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
endif()
check_language(CUDA)
