# Warnings live on an INTERFACE target that every project target links privately.
# -Wno-restrict: GCC 12 reports a false -Wrestrict inside std::string (GCC bug 105329).
add_library(ascprof_warnings INTERFACE)
target_compile_options(ascprof_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast
  -Wcast-align -Woverloaded-virtual -Wno-unused-parameter>
  $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:GNU>>:-Wno-restrict>)
