#pragma once
/// How many cores this process may run on.

namespace ascprof {

/// The cores in this process's CPU affinity mask, not the machine's: mpirun binds each process to
/// one core by default (then 1), a plain run or `--bind-to none` sees them all. At least 1.
unsigned usable_cores();

}  // namespace ascprof
