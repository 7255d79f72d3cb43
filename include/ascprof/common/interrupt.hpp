#pragma once
/// A cooperative stop on SIGTERM and SIGINT (Slurm's time limit and scancel send SIGTERM, then
/// SIGKILL after KillWait; Ctrl-C sends SIGINT). The handler only records the signal; the work
/// loops ask interrupted() at their boundaries (between ranks, between a rank's sections, every
/// 4,096 events of the trace_view.json importer, between report parts), abandon what is in flight through the writers'
/// RAII (temporary files removed, nothing half published), keep what is finished (rank
/// checkpoints) and end the run with status "interrupted" and exit code kInterruptedExitCode, so a
/// requeued job resumes from every finished rank. A second SIGINT (Ctrl-C pressed again) ends the
/// process at once; further SIGTERMs do not (launchers relay and repeat them; SIGKILL follows).
#include <string_view>

#include "ascprof/common/status.hpp"

namespace ascprof {

/// The exit code of a run stopped by SIGTERM/SIGINT (documented in the README).
inline constexpr int kInterruptedExitCode = 5;

/// Installs the SIGTERM/SIGINT handlers (once per process). Also ignores SIGXFSZ, so a file-size
/// limit (ulimit -f) fails the write with EFBIG and a clear error instead of killing the process.
void install_interrupt_handlers();

/// True once a stop was asked for, by a signal to this process or by request_interrupt().
bool interrupted();

/// The signal that asked for the stop (SIGTERM, SIGINT), 0 when none.
int interrupt_signal();

/// Asks for the stop from code: another process of the run was signalled.
void request_interrupt(int signal_number);

/// "SIGTERM", "SIGINT", or "signal N".
std::string_view signal_name(int signal_number);

/// A kInterrupted status "WHERE: interrupted by SIGTERM" for the work that was abandoned.
Status interrupted_status(std::string_view where);

/// Forgets a stop (tests that run several interrupted runs in one process).
void clear_interrupt_for_testing();

}  // namespace ascprof
