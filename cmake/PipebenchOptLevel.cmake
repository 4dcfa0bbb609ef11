# The optimisation level of code no benchmark times, lowered so that a cold build (CI's, a
# newcomer's) spends its time where the measured code is. The option comes after the build
# type's (-O3 in Release, -O1 in the sanitizer presets) on the compile line, so it wins;
# every library and case a benchmark times keeps the build type's level.
#
#   pipebench_test_code       (INTERFACE target) the tests' own translation units
#                             (GoogleTest's macros, their fixtures): a test's time goes into
#                             the library calls it makes. They were 43 % of a cold Release
#                             build and 41 % of a cold ASan one.
#   pipebench_untimed_code    (INTERFACE target) report/: reads a run's JSON, prints the verdict.
#   pipebench_untimed_sources(FILE...)  the same for single files of a target whose other
#                             files are timed (bench's command line, its JSON output).
#
# Levels: Release -O1; ASan -O0 (the fuzz preset keeps -O1: its harnesses' executions per
# second); TSan keeps -O1 (its tests repeat three times, and TSan at -O0 is several times
# slower). Measured on whatif_test.cpp, one core, AMD EPYC: GCC 12 -O3 25.3 s, -O1 16.8 s;
# clang-14 with ASan + UBSan -O1 37.7 s, -O0 14.4 s (under clang + ASan the optimiser, not
# the parser, is most of a compile: a precompiled header of the standard library and
# nlohmann/json saved 5 to 20 % per file, so there is none).
set(PIPEBENCH_COLD_OPTIONS "")
if(PIPEBENCH_SANITIZE MATCHES "address")
  if(NOT PIPEBENCH_FUZZ)
    set(PIPEBENCH_COLD_OPTIONS -O0)
  endif()
elseif(CMAKE_BUILD_TYPE STREQUAL "Release")
  set(PIPEBENCH_COLD_OPTIONS -O1)
endif()
add_library(pipebench_test_code INTERFACE)
add_library(pipebench_untimed_code INTERFACE)
target_compile_options(pipebench_test_code INTERFACE ${PIPEBENCH_COLD_OPTIONS})
target_compile_options(pipebench_untimed_code INTERFACE ${PIPEBENCH_COLD_OPTIONS})
function(pipebench_untimed_sources)
  if(PIPEBENCH_COLD_OPTIONS)
    set_source_files_properties(${ARGN} PROPERTIES COMPILE_OPTIONS "${PIPEBENCH_COLD_OPTIONS}")
  endif()
endfunction()
