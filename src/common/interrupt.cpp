#include "ascprof/common/interrupt.hpp"

#include <atomic>
#include <csignal>
#include <string>

namespace ascprof {

namespace {

// Lock-free atomics are async-signal-safe; the handler touches nothing else but sigaction/raise.
std::atomic<int> g_signal{0};   // the stop: the first signal received here, or one another process had
std::atomic<int> g_sigints{0};  // SIGINTs received here
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void on_stop_signal(int sig) {
  int expected = 0;
  g_signal.compare_exchange_strong(expected, sig);
  // Only a person presses Ctrl-C twice: the second SIGINT takes the default action, now. Repeated
  // SIGTERMs come from the machinery (mpirun relays its own, srun --kill-on-bad-exit signals the
  // tasks still running, Slurm signals every process of a step) and must not cut the clean stop
  // short; SIGKILL is their escalation.
  if (sig == SIGINT && g_sigints.fetch_add(1) >= 1) {
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, nullptr);
    raise(sig);
  }
}

}  // namespace

void install_interrupt_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // the stop is cooperative: system calls in flight just finish
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  std::signal(SIGXFSZ, SIG_IGN);
}

bool interrupted() { return g_signal.load(std::memory_order_relaxed) != 0; }

int interrupt_signal() { return g_signal.load(std::memory_order_relaxed); }

void request_interrupt(int signal_number) {
  int expected = 0;
  g_signal.compare_exchange_strong(expected, signal_number == 0 ? SIGTERM : signal_number);
}

std::string_view signal_name(int signal_number) {
  switch (signal_number) {
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case 0: return "none";
  }
  thread_local std::string other;
  other = "signal " + std::to_string(signal_number);
  return other;
}

Status interrupted_status(std::string_view where) {
  std::string msg(where);
  msg += ": interrupted by ";
  msg += signal_name(interrupt_signal());
  return Status(ErrorCode::kInterrupted, std::move(msg));
}

void clear_interrupt_for_testing() {
  g_signal.store(0);
  g_sigints.store(0);
}

}  // namespace ascprof
