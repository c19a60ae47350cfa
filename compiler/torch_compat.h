// The one place where LibTorch 1.13 (Debian 12) and 2.x (official downloads, Debian 13) differ for
// tcprof. Code elsewhere uses these names and never tests TORCH_VERSION_* itself. Autograd nodes:
// compiler/torch_compat_autograd.h.
#pragma once
#include <type_traits>
#include <utility>

#include <c10/core/Stream.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/version.h>

#define TCPROF_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) || (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

// at::scaled_dot_product_attention with its `scale` argument (2.1): the cuda backend's attention.
#define TCPROF_HAVE_SDPA TCPROF_TORCH_AT_LEAST(2, 1)

namespace tcprof::compat {

// c10::Stream::native_handle (the cudaStream_t of a CUDA stream) is in 2.11 and 2.15 but not in
// Debian 13's 2.6: detected, not tied to a version. The cuda backend launches on LibTorch's
// current stream; without the handle, on the default stream only (false for any other).
template <typename S, typename = void>
struct HasNativeHandle : std::false_type {};
template <typename S>
struct HasNativeHandle<S, std::void_t<decltype(std::declval<const S&>().native_handle())>> : std::true_type {};

template <typename S = c10::Stream>
bool native_stream(const S& stream, void** handle) {
  if constexpr (HasNativeHandle<S>::value) {
    *handle = stream.native_handle();
    return true;
  } else {
    *handle = nullptr;
    return stream.id() == 0;
  }
}

// LibTorch's current stream on `device` (a CUDA graph's capture stream included), as its native
// handle: kernels tcprof launches itself go there, so they stay ordered with LibTorch's. False
// where the handle cannot be had (see native_stream).
inline bool current_native_stream(const c10::Device& device, void** handle) {
  return native_stream(c10::impl::getDeviceGuardImpl(device.type())->getStream(device), handle);
}

}  // namespace tcprof::compat

// c10::Allocator::allocate lost its const in 2.3, when copy_data became pure virtual.
#if TCPROF_TORCH_AT_LEAST(2, 3)
#define TCPROF_ALLOCATE_CONST
#else
#define TCPROF_ALLOCATE_CONST const
#endif
