#pragma once
// Runs the real `railcheck` executable (built beside the test binaries) from a test, in a
// folder of the test's choosing, and returns its exit code and output.
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace exe {

struct Ran {
  int code = -1;  // exit status; 128 + N for a signal
  std::string out, err;
};

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// `mpirun -np 2` as the tests start it: in a container as root, one host with more ranks than
// slots, loopback TCP only; OpenMPI's own allocations would read as leaks under the sanitizer
// build.
inline const std::string kMpirunTwoRanks =
    "env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 "
    "OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo ASAN_OPTIONS=detect_leaks=0 "
    "/usr/bin/mpirun -np 2 --oversubscribe --allow-run-as-root";

// `railcheck <args>` run in `dir` under a 60 s limit (a hang is exit 124) and `limits` (shell
// ulimits, ignored under ASan, which reserves terabytes of address space), started by `launcher`
// when given (`mpirun -np 2`); stdout and stderr go to dir/out.txt and dir/err.txt.
inline Ran run_railcheck(const std::filesystem::path& dir, const std::string& args, std::string limits = "",
                         const std::string& launcher = "") {
#ifdef RAILCHECK_SANITIZE
  limits.clear();
#endif
  const auto exe = std::filesystem::read_symlink("/proc/self/exe").parent_path() / "../cli/railcheck";
  const std::string cmd = "cd '" + dir.string() + "' && " + limits + " timeout 60 " + launcher + " '" + exe.string() +
                          "' " + args + " >out.txt 2>err.txt";
  const int st = std::system(("bash -c \"" + cmd + "\"").c_str());
  Ran r;
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  r.out = slurp(dir / "out.txt");
  r.err = slurp(dir / "err.txt");
  return r;
}

}  // namespace exe
