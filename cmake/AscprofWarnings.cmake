# Warnings live on an INTERFACE target that every project target links privately.
add_library(ascprof_warnings INTERFACE)
target_compile_options(ascprof_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast
  -Wcast-align -Woverloaded-virtual -Wno-unused-parameter>)
