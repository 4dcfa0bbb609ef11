# Two INTERFACE targets that lower the optimisation level of code no benchmark times, so that
# a cold build (CI's, a newcomer's) spends its time where the measured code is. The option
# comes after the build type's (-O3 in Release, -O1 in the sanitizer presets) on the compile
# line, so it wins; every library a benchmark times keeps the build type's level.
#
#   pipebench_test_code      the tests' own translation units (GoogleTest's macros, their
#                            fixtures): a test's time goes into the library calls it makes.
#                            They were 43 % of a cold Release build and 41 % of a cold ASan
#                            one. Release: -O1; ASan: -O0; TSan keeps -O1 (its tests repeat
#                            three times, and TSan at -O0 is several times slower).
#   pipebench_untimed_code   report/ (reads a run's JSON, prints the verdict): -O1 in Release.
#
# Measured on whatif_test.cpp, one core, AMD EPYC: GCC 12 -O3 25.3 s, -O1 16.8 s; clang-14
# with ASan + UBSan -O1 37.7 s, -O0 14.4 s (under clang + ASan the optimiser, not the
# parser, is most of a test's compile time).
add_library(pipebench_test_code INTERFACE)
add_library(pipebench_untimed_code INTERFACE)
if(PIPEBENCH_SANITIZE MATCHES "address")
  target_compile_options(pipebench_test_code INTERFACE -O0)
elseif(CMAKE_BUILD_TYPE STREQUAL "Release")
  target_compile_options(pipebench_test_code INTERFACE -O1)
  target_compile_options(pipebench_untimed_code INTERFACE -O1)
endif()
