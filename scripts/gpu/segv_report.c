// LD_PRELOAD aid for the GPU conformance run: on SIGSEGV, print the faulting address, the
// program counter as library + symbol + offset (dladdr), and a backtrace, then die as before.
// libpsm (which libfabric loads) installs its own SIGSEGV handler and reports nothing useful;
// while this library is preloaded, other attempts to install a SIGSEGV handler (sigaction or
// signal) are ignored.
// Build: cc -shared -fPIC -O1 -o segv_report.so segv_report.c -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

static int (*real_sigaction)(int, const struct sigaction*, struct sigaction*);

static void report(int sig, siginfo_t* si, void* context) {
  const ucontext_t* uc = context;
  void* pc = (void*)uc->uc_mcontext.gregs[REG_RIP];
  Dl_info info;
  char line[512];
  if (dladdr(pc, &info) != 0) {
    snprintf(line, sizeof line, "SEGV_REPORT pid %d addr %p pc %p in %s (base %p) %s+%#lx\n", getpid(), si->si_addr,
             pc, info.dli_fname, info.dli_fbase, info.dli_sname ? info.dli_sname : "?",
             info.dli_sname ? (unsigned long)((char*)pc - (char*)info.dli_saddr) : 0ul);
  } else {
    snprintf(line, sizeof line, "SEGV_REPORT pid %d addr %p pc %p (no library)\n", getpid(), si->si_addr, pc);
  }
  // Only async-signal-safe calls from here (backtrace is loaded below, before any fault).
  (void)!write(2, line, strlen(line));
  void* frames[64];
  const int n = backtrace(frames, 64);
  backtrace_symbols_fd(frames, n, 2);
  // Through the real sigaction: our own signal() below ignores SIGSEGV, so calling it here left
  // this handler installed and the process reporting the same fault forever, never dying.
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  real_sigaction(sig, &dfl, NULL);
  raise(sig);
}

__attribute__((constructor)) static void install(void) {
  real_sigaction = dlsym(RTLD_NEXT, "sigaction");
  void* warm[1];
  backtrace(warm, 1);  // loads libgcc_s now: it must not be dlopen'ed inside the handler
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = report;
  sa.sa_flags = SA_SIGINFO;
  real_sigaction(SIGSEGV, &sa, NULL);
}

// signal() goes to the kernel without passing through sigaction's PLT entry: both are covered.
sighandler_t signal(int sig, sighandler_t handler) {
  struct sigaction sa, old;
  if (real_sigaction == NULL) real_sigaction = dlsym(RTLD_NEXT, "sigaction");
  if (sig == SIGSEGV) {
    real_sigaction(sig, NULL, &old);
    return old.sa_handler;
  }
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = handler;
  sa.sa_flags = SA_RESTART;
  if (real_sigaction(sig, &sa, &old) != 0) return SIG_ERR;
  return old.sa_handler;
}

int sigaction(int sig, const struct sigaction* act, struct sigaction* old) {
  if (real_sigaction == NULL) real_sigaction = dlsym(RTLD_NEXT, "sigaction");
  if (sig == SIGSEGV && act != NULL) return old != NULL ? real_sigaction(sig, NULL, old) : 0;
  return real_sigaction(sig, act, old);
}
