# Finds every dependency as the Debian packages of scripts/setup.sh install them, and
# exposes each as an imported target. OpenCV: Debian ships its CMake config only in the
# libopencv-dev meta package (some 56 extra packages), so the modules we use are found
# here from their headers and libraries (libopencv-{core,imgproc,imgcodecs}-dev, and
# libopencv-contrib-dev for the quality module).

find_package(Threads REQUIRED)
find_package(TBB REQUIRED)
find_package(benchmark REQUIRED)
find_package(nlohmann_json REQUIRED)
find_package(CLI11 QUIET CONFIG)
if(NOT TARGET CLI11::CLI11)
  find_path(CLI11_INCLUDE_DIR CLI/CLI.hpp REQUIRED)
  add_library(CLI11::CLI11 INTERFACE IMPORTED)
  target_include_directories(CLI11::CLI11 INTERFACE ${CLI11_INCLUDE_DIR})
endif()
if(PIPEBENCH_TESTS)
  find_package(GTest REQUIRED)
endif()

# --- OpenCV core, imgproc, quality, imgcodecs (imgcodecs: PIPEBENCH_OPENCV_CODECS only) -
find_path(OpenCV_INCLUDE_DIR opencv2/core.hpp PATH_SUFFIXES opencv4 REQUIRED)
# quality (opencv_contrib, libopencv-contrib-dev): PSNR and SSIM of a what-if candidate's
# output against today's (transforms/fidelity.h).
set(pipebench_opencv_modules core imgproc quality)
if(PIPEBENCH_OPENCV_CODECS)
  list(APPEND pipebench_opencv_modules imgcodecs)
endif()
foreach(module ${pipebench_opencv_modules})
  find_library(OpenCV_${module}_LIBRARY opencv_${module} REQUIRED)
  add_library(pipebench::opencv_${module} UNKNOWN IMPORTED)
  set_target_properties(pipebench::opencv_${module} PROPERTIES
    IMPORTED_LOCATION ${OpenCV_${module}_LIBRARY}
    INTERFACE_INCLUDE_DIRECTORIES ${OpenCV_INCLUDE_DIR})
endforeach()

# --- libjpeg-turbo: the TurboJPEG API and the libjpeg API -----------------------------
find_path(TurboJPEG_INCLUDE_DIR turbojpeg.h REQUIRED)
find_library(TurboJPEG_LIBRARY turbojpeg REQUIRED)
add_library(pipebench::turbojpeg UNKNOWN IMPORTED)
set_target_properties(pipebench::turbojpeg PROPERTIES
  IMPORTED_LOCATION ${TurboJPEG_LIBRARY}
  INTERFACE_INCLUDE_DIRECTORIES ${TurboJPEG_INCLUDE_DIR})
find_package(JPEG REQUIRED)   # CMake's FindJPEG: libjpeg62-turbo-dev

# --- CUDA (optional) -------------------------------------------------------------------
set(PIPEBENCH_HAVE_CUDA OFF)
set(PIPEBENCH_HAVE_CUDNN OFF)
if(NOT PIPEBENCH_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      # Hopper (H100/H200) natively, plus PTX for anything newer.
      set(CMAKE_CUDA_ARCHITECTURES 90)
    endif()
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(PIPEBENCH_HAVE_CUDA ON)
    # cuDNN (the cuda:cnn step), looked for in the CUDA toolkit's directories; without it
    # the build goes on and make_cnn_step() says "built without cuDNN".
    if(NOT PIPEBENCH_CUDNN STREQUAL "OFF")
      find_path(CUDNN_INCLUDE_DIR cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
      find_library(CUDNN_LIBRARY cudnn HINTS ${CUDAToolkit_LIBRARY_DIR})
      if(CUDNN_INCLUDE_DIR AND CUDNN_LIBRARY)
        add_library(pipebench::cudnn UNKNOWN IMPORTED)
        set_target_properties(pipebench::cudnn PROPERTIES
          IMPORTED_LOCATION ${CUDNN_LIBRARY}
          INTERFACE_INCLUDE_DIRECTORIES ${CUDNN_INCLUDE_DIR})
        set(PIPEBENCH_HAVE_CUDNN ON)
      endif()
    endif()
  elseif(PIPEBENCH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "PIPEBENCH_CUDA=ON but no CUDA compiler was found")
  endif()
endif()
message(STATUS "pipebench: CUDA support ${PIPEBENCH_HAVE_CUDA}, cuDNN ${PIPEBENCH_HAVE_CUDNN}")

# --- MPI (optional): Open MPI from Debian (openmpi-bin, libopenmpi-dev) ----------------
# Only the C API is used (pipeline/dist/dist_mpi.cpp), so the C++ bindings are not needed.
set(PIPEBENCH_HAVE_MPI OFF)
if(NOT PIPEBENCH_MPI STREQUAL "OFF")
  enable_language(C)  # FindMPI's C component looks for the C compiler's MPI
  if(PIPEBENCH_MPI STREQUAL "ON")
    find_package(MPI REQUIRED COMPONENTS C)
  else()
    find_package(MPI QUIET COMPONENTS C)
  endif()
  if(MPI_C_FOUND)
    set(PIPEBENCH_HAVE_MPI ON)
    find_program(PIPEBENCH_MPIRUN NAMES mpirun mpiexec)
  endif()
endif()
message(STATUS "pipebench: MPI ${PIPEBENCH_HAVE_MPI}")
