# One INTERFACE target carries the warning flags (taskflow's habit), with a CUDA branch.
add_library(pipebench_warnings INTERFACE)
target_compile_options(pipebench_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wno-missing-field-initializers>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall>)
