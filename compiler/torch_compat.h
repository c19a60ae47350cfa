// The one place where LibTorch 1.13 (Debian 12) and 2.x (official downloads, Debian 13) differ for
// tcprof. Code elsewhere uses these names and never tests TORCH_VERSION_* itself. Autograd nodes:
// compiler/torch_compat_autograd.h.
#pragma once
#include <torch/version.h>

#define TCPROF_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) || (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

// at::scaled_dot_product_attention with its `scale` argument (2.1): the cuda backend's attention.
#define TCPROF_HAVE_SDPA TCPROF_TORCH_AT_LEAST(2, 1)

// c10::Stream::native_handle (the cudaStream_t of a CUDA stream): the cuda backend launches its
// kernels on LibTorch's current stream; before it, on the default stream only.
#define TCPROF_HAVE_STREAM_NATIVE_HANDLE TCPROF_TORCH_AT_LEAST(2, 2)

// c10::Allocator::allocate lost its const in 2.3, when copy_data became pure virtual.
#if TCPROF_TORCH_AT_LEAST(2, 3)
#define TCPROF_ALLOCATE_CONST
#else
#define TCPROF_ALLOCATE_CONST const
#endif
