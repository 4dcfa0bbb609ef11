# Sanitizer and fuzzing builds (the asan, tsan and fuzz presets of CMakePresets.json;
# scripts/sanitize.sh and scripts/fuzz.sh run them in CI).
#
#   PIPEBENCH_SANITIZE  a -fsanitize= list applied to every target of the tree, e.g.
#                       "address,undefined" (ASan + UBSan) or "thread" (TSan). Empty: none.
#   PIPEBENCH_FUZZ      also instrument every target for libFuzzer's coverage
#                       (-fsanitize=fuzzer-no-link) and build the harnesses of tests/fuzz/.
#                       Needs clang (Debian's clang-14 + libclang-rt-14-dev): GCC has no
#                       libFuzzer.
#
# UBSan findings are made fatal at compile time (-fno-sanitize-recover): a report that only
# prints would let ctest pass. The runtime options (suppressions, halt_on_error, ...) are in
# the presets' test environment and in the scripts, since the sanitizers read them from the
# environment.

set(PIPEBENCH_SANITIZE "" CACHE STRING
  "Sanitizers for every target, a -fsanitize= list: address,undefined or thread (empty: none)")
option(PIPEBENCH_FUZZ "Build the libFuzzer harnesses of tests/fuzz/ (clang only)" OFF)

if(PIPEBENCH_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "PIPEBENCH_FUZZ=ON needs clang (libFuzzer); got "
      "${CMAKE_CXX_COMPILER_ID}. Use the fuzz preset (clang++-14).")
  endif()
  if(NOT PIPEBENCH_SANITIZE)
    # A fuzzer without ASan misses the heap overflows it exists to find.
    set(PIPEBENCH_SANITIZE "address,undefined")
  endif()
endif()

if(PIPEBENCH_SANITIZE)
  if(PIPEBENCH_SANITIZE MATCHES "thread" AND PIPEBENCH_SANITIZE MATCHES "address")
    message(FATAL_ERROR "PIPEBENCH_SANITIZE: thread and address cannot be combined "
      "(got ${PIPEBENCH_SANITIZE})")
  endif()
  if(PIPEBENCH_FUZZ AND PIPEBENCH_SANITIZE MATCHES "thread")
    message(FATAL_ERROR "PIPEBENCH_FUZZ=ON runs under ASan/UBSan, not TSan")
  endif()
  if(PIPEBENCH_SANITIZE MATCHES "thread" AND TBB_DIR MATCHES "^/usr/")
    # Debian's libtbb is not instrumented: TSan cannot see its synchronisation and reports
    # ~250 races inside the flow graph that are not there (issue 15).
    message(FATAL_ERROR "PIPEBENCH_SANITIZE=thread needs a oneTBB built with "
      "TBB_SANITIZE=thread, found Debian's at ${TBB_DIR}. Run `scripts/sanitize.sh tsan` "
      "(it builds one into .cache/tbb-tsan) or set CMAKE_PREFIX_PATH to one.")
  endif()
  add_compile_options(-fsanitize=${PIPEBENCH_SANITIZE} -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${PIPEBENCH_SANITIZE})
  if(PIPEBENCH_SANITIZE MATCHES "undefined")
    add_compile_options(-fno-sanitize-recover=undefined)
  endif()
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # GCC's manual: sanitizer instrumentation makes -Wmaybe-uninitialized report false
    # positives (here 42 of them, all inside libstdc++'s <regex>); the Release build keeps it.
    add_compile_options(-Wno-maybe-uninitialized)
  endif()
  message(STATUS "pipebench: sanitizers ${PIPEBENCH_SANITIZE}")
endif()

if(PIPEBENCH_SANITIZE MATCHES "thread")
  # target_clones makes an ifunc whose resolver the dynamic loader calls while relocating,
  # before TSan's runtime is initialised; both GCC 12 and clang 14 instrument the resolver
  # with a function-entry hook, so the program dies with SIGSEGV before main (the kernels of
  # transforms/photometric.cpp and affine.cpp use target_clones). In the files that use
  # target_clones, only that hook is turned off: their memory accesses are still checked,
  # their functions just do not appear in TSan's stacks. The files are found at the end of
  # configuration by looking for "target_clones" in every target's sources.
  function(pipebench_tsan_ifunc_files)
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
      set(flag "--param=tsan-instrument-func-entry-exit=0")
    else()
      set(flag "SHELL:-mllvm -tsan-instrument-func-entry-exit=0")
    endif()
    get_property(dirs DIRECTORY ${CMAKE_SOURCE_DIR} PROPERTY SUBDIRECTORIES)
    foreach(dir IN LISTS dirs)
      get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
      foreach(target IN LISTS targets)
        get_target_property(sources ${target} SOURCES)
        get_target_property(source_dir ${target} SOURCE_DIR)
        foreach(src IN LISTS sources)
          cmake_path(ABSOLUTE_PATH src BASE_DIRECTORY ${source_dir} OUTPUT_VARIABLE path)
          if(path MATCHES "\\.(cpp|cc)$" AND EXISTS ${path})
            file(STRINGS ${path} uses REGEX "target_clones")
            if(uses)
              set_source_files_properties(${path} TARGET_DIRECTORY ${target}
                PROPERTIES COMPILE_OPTIONS "${flag}")
              message(STATUS "pipebench: TSan function-entry hooks off in ${src} (target_clones)")
            endif()
          endif()
        endforeach()
      endforeach()
    endforeach()
  endfunction()
  cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL pipebench_tsan_ifunc_files)
endif()

if(PIPEBENCH_FUZZ)
  # Coverage instrumentation for the libraries; only the harnesses link libFuzzer's main
  # (-fsanitize=fuzzer, tests/fuzz/CMakeLists.txt).
  add_compile_options(-fsanitize=fuzzer-no-link)
  message(STATUS "pipebench: libFuzzer harnesses (tests/fuzz)")
endif()
