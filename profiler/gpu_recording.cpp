#include "profiler/gpu_recording.h"

#ifdef TCPROF_HAVE_CUPTI
#include "profiler/cupti_collector.h"
#endif

namespace tcprof {

std::shared_ptr<LaunchObserver> start_gpu_recording(RunWriter& writer, ProfileMode mode, std::string* why,
                                                    std::shared_ptr<GpuCallSampling> sampling) {
#ifdef TCPROF_HAVE_CUPTI
  CuptiCollector::Options options;
  options.mode = mode;
  options.sampling = std::move(sampling);
  std::shared_ptr<CuptiCollector> collector = CuptiCollector::start(writer, options, why);
  return collector;
#else
  (void)writer;
  (void)sampling;
  gpu_sampling_policy(mode);  // a bad TCPROF_SUMMARY_GPU_EVERY is said all the same
  *why = "this tcprof was built without CUPTI (no cupti.h in the CUDA toolkit at build time)";
  return nullptr;
#endif
}

}  // namespace tcprof
