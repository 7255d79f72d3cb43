#pragma once
/// Process-wide allocator setting for a batch tool that handles rank after rank.

namespace ascprof {

/// Grows the heap in 64 MiB steps and keeps up to 256 MiB of freed heap for reuse instead of
/// returning it to the OS after every rank: a rank's segment, layer and block tables are megabytes of
/// small strings and vectors, and re-faulting their pages rank after rank cost about half of the
/// segment + classify time on a 750k-event rank (segment_classify_benchmark). Blocks above glibc's
/// mmap threshold (event columns) still come from mmap and are returned when freed, so the peak is
/// set by the largest rank as before (plus at most the 64 MiB pad). No-op off glibc.
void keep_freed_heap_for_reuse();

/// Gives the heap's free pages back to the OS now (glibc malloc_trim), whatever the threshold above:
/// for the coordinator after it frees per-rank data in many small blocks (10,000 ranks' step windows
/// or operator profiles, hundreds of MB), which would otherwise stay resident as holes no later large
/// block can use. No-op off glibc.
void return_freed_heap();

}  // namespace ascprof
