# oneDNN for the layout pass's convolution chains (compiler/backends/cpp/run/onednn_*.cpp), found
# once: TCPROF_DNNL_INCLUDE_DIR and TCPROF_DNNL_LIBRARY.
#
# The Python environment of TCPROF_TORCH_PYTHON first, where it holds both oneDNN's headers and its
# library (pip install onednn-cpu-gomp onednn-devel-cpu-gomp: oneDNN 3.2 on LibTorch's GNU OpenMP,
# which scripts/torch-wheel-venv.sh installs), then the system's (Debian's libdnnl-dev, oneDNN
# 2.6). 3.2 has brgemm convolutions for AVX2 CPUs that 2.6 lacks: ResNet18's 3x3 convolutions
# take up to 28% less time on an AVX2 EPYC (docs/build.md). A wheel's LibTorch links its own
# oneDNN statically and hides it, so tcprof's is always a library of its own.
if(TCPROF_TORCH_PYTHON AND NOT TCPROF_DNNL_INCLUDE_DIR)
  execute_process(COMMAND ${TCPROF_TORCH_PYTHON} -c "import sys; print(sys.prefix)"
                  OUTPUT_VARIABLE _tcprof_py_prefix OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(_tcprof_py_prefix AND EXISTS "${_tcprof_py_prefix}/include/oneapi/dnnl/dnnl.hpp")
    find_library(_tcprof_py_dnnl NAMES dnnl PATHS "${_tcprof_py_prefix}/lib" NO_DEFAULT_PATH)
    if(_tcprof_py_dnnl)
      set(TCPROF_DNNL_INCLUDE_DIR "${_tcprof_py_prefix}/include" CACHE PATH "oneDNN's include folder")
      set(TCPROF_DNNL_LIBRARY "${_tcprof_py_dnnl}" CACHE FILEPATH "oneDNN's library")
    endif()
  endif()
endif()
find_path(TCPROF_DNNL_INCLUDE_DIR oneapi/dnnl/dnnl.hpp)
find_library(TCPROF_DNNL_LIBRARY NAMES dnnl)
