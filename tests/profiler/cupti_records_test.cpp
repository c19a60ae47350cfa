// The CUPTI buffer processing and correlation code, fed with activity records built in memory and
// walked by the real libcupti's cuptiActivityGetNextRecord (no GPU needed), into a real database.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <algorithm>
#include <map>

#include "analysis/kernel_stats.h"
#include "core/run_reader.h"
#include "core/run_writer.h"
#include "profiler/cupti_collector.h"
#include "profiler/cupti_loader.h"
#include "profiler/cupti_records.h"
#include "tests/profiler/cupti_test_buffer.h"
#include "tests/test_support.h"

namespace tcprof {
namespace {

using testing::CuptiTestBuffer;
using testing::external_record;
using testing::kernel_record;
using testing::runtime_record;

// cuptiActivityGetNumDroppedRecords needs a live context; the tests decide what it reports.
size_t g_dropped_to_report = 0;
CUptiResult fake_dropped(CUcontext, uint32_t, size_t* dropped) {
  *dropped = g_dropped_to_report;
  g_dropped_to_report = 0;
  return CUPTI_SUCCESS;
}

class CuptiRecords : public ::testing::Test {
 protected:
  void SetUp() override {
    auto loaded = load_cupti({TCPROF_TOOLKIT_CUPTI});
    ASSERT_TRUE(loaded.available()) << loaded.error;
    api_ = *loaded.api;
    api_.activity_get_num_dropped_records = &fake_dropped;
    db_ = dir_.file("gpu.db");
    RunInfo info;
    info.command = "test";
    info.device = "cuda:0";
    writer_ = std::make_unique<RunWriter>(db_, info);
    call_ = writer_->next_id();
    graph_ = writer_->next_id();
  }

  std::vector<KernelRow> rows() {
    writer_->close();
    RunReader r(db_);
    std::vector<KernelRow> out;
    r.for_each_kernel(r.runs().at(0).id, [&](const KernelRow& k) { out.push_back(k); });
    return out;
  }

  std::map<std::string, int64_t> counters() {
    RunReader r(db_);
    auto c = r.counters(r.runs().at(0).id);
    return {c.begin(), c.end()};
  }

  static const KernelRow* find(const std::vector<KernelRow>& rows, const std::string& name) {
    for (const auto& r : rows) {
      if (r.name == name) return &r;
    }
    return nullptr;
  }

  testing::TempDir dir_;
  std::string db_;
  CuptiApi api_;
  std::unique_ptr<RunWriter> writer_;
  LaunchScopeTable scopes_;
  Id call_ = 0, graph_ = 0;
};

TEST_F(CuptiRecords, KernelLaunchedInAScopeIsAttributedToItsCallAndGraph) {
  CuptiRecordProcessor p(*writer_, api_, scopes_, /*gpu_to_host_ns=*/-1'000'000);
  uint64_t ext = scopes_.open({call_, graph_});
  CuptiTestBuffer b;
  b.add(external_record(11, ext))
      .add(runtime_record(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 11, 5'000'000, 5'004'000))
      .add(kernel_record("triton_fused_add", 11, 5'010'000, 5'030'000));
  p.buffer_completed(nullptr, 0, b.data(), b.valid_bytes());
  p.finish();
  auto s = p.stats();
  EXPECT_EQ(s.records, 3);
  EXPECT_EQ(s.kernels, 1);
  EXPECT_EQ(s.api_calls, 1);
  EXPECT_EQ(s.attributed, 2);

  auto out = rows();
  ASSERT_EQ(out.size(), 2u);
  const KernelRow* k = find(out, "triton_fused_add");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->kind, "gpu");
  EXPECT_EQ(k->device, "cuda:0");
  EXPECT_EQ(k->stream, 7);
  EXPECT_EQ(k->start_ns, 4'010'000);  // aligned to the host clock
  EXPECT_EQ(k->duration_ns, 20'000);
  EXPECT_EQ(k->correlation_id, 11);
  EXPECT_EQ(k->call_id, call_);
  EXPECT_EQ(k->graph_id, graph_);
  const KernelRow& launch = out[0].kind == "cuda_runtime" ? out[0] : out[1];
  EXPECT_EQ(launch.kind, "cuda_runtime");
  EXPECT_NE(launch.name.find("cudaLaunchKernel"), std::string::npos) << launch.name;
  EXPECT_EQ(launch.device, "cpu");
  EXPECT_EQ(launch.stream, 4242);
  EXPECT_EQ(launch.correlation_id, 11);
  EXPECT_EQ(launch.call_id, call_);

  RunReader r(db_);
  // grid and block are stored as "x,y,z"; RunReader has no accessor for them yet.
  EXPECT_EQ(analysis::kernel_stats(r, r.runs().at(0).id).size(), 2u);
}

TEST_F(CuptiRecords, ExternalCorrelationArrivingLaterStillAttributes) {
  CuptiRecordProcessor p(*writer_, api_, scopes_, 0);
  uint64_t ext_a = scopes_.open({call_, graph_});
  Id graph_b = writer_->next_id();
  uint64_t ext_b = scopes_.open({call_, graph_b});
  CuptiTestBuffer first;
  first.add(kernel_record("k_a", 21, 1'000, 2'000))   // its correlation record follows it
      .add(external_record(21, ext_a))
      .add(kernel_record("k_b", 22, 3'000, 4'000));  // its correlation record is in the next buffer
  CuptiTestBuffer second;
  second.add(external_record(22, ext_b));
  p.buffer_completed(nullptr, 0, first.data(), first.valid_bytes());
  p.end_window();  // a flush boundary between the two buffers
  p.buffer_completed(nullptr, 0, second.data(), second.valid_bytes());
  p.finish();
  EXPECT_EQ(p.stats().attributed, 2);
  EXPECT_EQ(p.stats().unattributed, 0);
  auto out = rows();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(find(out, "k_a")->graph_id, graph_);
  EXPECT_EQ(find(out, "k_b")->graph_id, graph_b);
}

TEST_F(CuptiRecords, WorkWithoutOurCorrelationIsKeptUnattributed) {
  CuptiRecordProcessor p(*writer_, api_, scopes_, 0);
  cupti::MemcpyRecord m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  m.bytes = 4096;
  m.start = 10'000;
  m.end = 12'000;
  m.deviceId = 1;
  m.streamId = 3;
  m.correlationId = 31;
  cupti::MemsetRecord ms{};
  ms.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  ms.bytes = 512;
  ms.start = 13'000;
  ms.end = 13'500;
  ms.deviceId = 1;
  ms.streamId = 3;
  ms.correlationId = 0;  // no correlation at all: written at once
  CuptiTestBuffer b;
  b.add(m).add(ms).add(external_record(31, 999, CUPTI_EXTERNAL_CORRELATION_KIND_OPENACC));
  p.buffer_completed(nullptr, 0, b.data(), b.valid_bytes());
  p.end_window();
  p.end_window();  // waited one full window: written without attribution
  EXPECT_EQ(p.stats().unattributed, 2);
  auto out = rows();
  ASSERT_EQ(out.size(), 2u);
  const KernelRow* copy = find(out, "memcpy HtoD");
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->kind, "memcpy");
  EXPECT_EQ(copy->device, "cuda:1");
  EXPECT_EQ(copy->stream, 3);
  EXPECT_EQ(copy->call_id, 0);
  EXPECT_EQ(copy->correlation_id, 31);
  EXPECT_EQ(copy->bytes, 4096);  // the per-graph copy table adds these up
  ASSERT_NE(find(out, "memset"), nullptr);
  EXPECT_EQ(find(out, "memset")->kind, "memset");
  EXPECT_EQ(find(out, "memset")->bytes, 512);
}

TEST_F(CuptiRecords, OverheadSyncDriverAndDroppedRecordsAreStored) {
  CuptiRecordProcessor p(*writer_, api_, scopes_, 0);
  cupti::OverheadRecord o{};
  o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
  o.start = 100;
  o.end = 350;
  cupti::SyncRecord s{};
  s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
  s.start = 400;
  s.end = 900;
  s.streamId = 7;
  s.correlationId = 41;
  uint64_t ext = scopes_.open({call_, graph_});
  CuptiTestBuffer b;
  b.add(o)
      .add(external_record(41, ext))
      .add(s)
      .add(runtime_record(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 42, 1'000, 1'100, 77,
                          CUPTI_ACTIVITY_KIND_DRIVER))
      .add(kernel_record("bad_span", 43, 5'000, 4'000));  // end before start: not a row
  g_dropped_to_report = 17;
  p.buffer_completed(nullptr, 0, b.data(), b.valid_bytes());
  p.finish();
  auto st = p.stats();
  EXPECT_EQ(st.overheads, 1);
  EXPECT_EQ(st.syncs, 1);
  EXPECT_EQ(st.api_calls, 1);
  EXPECT_EQ(st.invalid, 1);
  EXPECT_EQ(st.dropped, 17);
  auto out = rows();
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(find(out, "cupti overhead: buffer flush")->kind, "cupti_overhead");
  const KernelRow* sync = find(out, "stream synchronize");
  ASSERT_NE(sync, nullptr);
  EXPECT_EQ(sync->kind, "sync");
  EXPECT_EQ(sync->call_id, call_);
  const KernelRow* driver = nullptr;
  for (const auto& r : out) {
    if (r.kind == "cuda_driver") driver = &r;
  }
  ASSERT_NE(driver, nullptr);
  EXPECT_NE(driver->name.find("cuLaunchKernel"), std::string::npos) << driver->name;
  EXPECT_EQ(driver->stream, 77);
  auto c = counters();
  EXPECT_EQ(c["cupti.dropped_records"], 17);
  EXPECT_EQ(c["cupti.overhead_ns"], 250);
}

TEST_F(CuptiRecords, EmptyBufferIsFine) {
  CuptiRecordProcessor p(*writer_, api_, scopes_, 0);
  CuptiTestBuffer b;
  b.add(kernel_record("k", 1, 1, 2));
  p.buffer_completed(nullptr, 0, b.data(), 0);
  p.finish();
  EXPECT_EQ(p.stats().records, 0);
  EXPECT_TRUE(rows().empty());
}

}  // namespace
}  // namespace tcprof

namespace tcprof {
namespace {

TEST_F(CuptiRecords, SummaryModeFoldsGpuWorkPerCallAndGraph) {
  CuptiRecordProcessor p(*writer_, api_, scopes_, 0, ProfileMode::Summary);
  uint64_t ext1 = scopes_.open({call_, graph_});
  uint64_t ext2 = scopes_.open({call_, graph_});
  CuptiTestBuffer b;
  b.add(external_record(1, ext1))
      .add(kernel_record("gemm", 1, 1'000, 4'000))
      .add(external_record(2, ext2))
      .add(kernel_record("gemm", 2, 5'000, 6'000));
  p.buffer_completed(nullptr, 0, b.data(), b.valid_bytes());
  p.end_window();
  EXPECT_TRUE(rows().empty());  // no per-launch rows
  RunReader r(db_);
  auto s = r.kernel_summaries(r.runs().at(0).id);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].name, "gemm");
  EXPECT_EQ(s[0].kind, "gpu");
  EXPECT_EQ(s[0].device, "cuda:0");
  EXPECT_EQ(s[0].call_id, call_);
  EXPECT_EQ(s[0].graph_id, graph_);
  EXPECT_EQ(s[0].count, 2);
  EXPECT_EQ(s[0].total_ns, 4'000);
  EXPECT_EQ(s[0].min_ns, 1'000);
  EXPECT_EQ(s[0].max_ns, 3'000);
  EXPECT_EQ(s[0].start_ns, 1'000);
  EXPECT_EQ(s[0].end_ns, 6'000);
}

TEST_F(CuptiRecords, SummaryModeAddsUpTheBytesOfFoldedCopies) {
  CuptiRecordProcessor p(*writer_, api_, scopes_, 0, ProfileMode::Summary);
  CuptiTestBuffer b;
  for (uint32_t i = 0; i < 3; ++i) {
    uint64_t ext = scopes_.open({call_, graph_});
    cupti::MemcpyRecord m{};
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
    m.bytes = 1000 + i;
    m.start = 10'000 + i * 1'000;
    m.end = m.start + 200;
    m.correlationId = 50 + i;
    b.add(external_record(50 + i, ext)).add(m);
  }
  p.buffer_completed(nullptr, 0, b.data(), b.valid_bytes());
  p.end_window();
  writer_->close();
  RunReader r(db_);
  auto s = r.kernel_summaries(r.runs().at(0).id);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].name, "memcpy DtoH");
  EXPECT_EQ(s[0].count, 3);
  EXPECT_EQ(s[0].bytes, 3003);
  EXPECT_EQ(s[0].total_ns, 600);
}

}  // namespace
}  // namespace tcprof

#include "profiler/cuda_api_selection.h"

namespace tcprof {
namespace {

// TCPROF_CUPTI_RECORD: what a collector enables, for measuring what each record kind costs.
TEST(CuptiRecordSelection, UnsetIsEverythingAndAListIsOnlyThose) {
  CuptiRecordSelection all = cupti_record_selection(nullptr);
  EXPECT_EQ(all.kinds.size(), 8u);
  EXPECT_TRUE(all.launch_scopes);
  EXPECT_EQ(cupti_record_selection("").kinds.size(), 8u);
  CuptiRecordSelection some = cupti_record_selection("kernel,correlation");
  EXPECT_EQ(some.kinds, (std::vector<CUpti_ActivityKind>{CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                                         CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION}));
  EXPECT_FALSE(some.launch_scopes) << "scopes per launch only when listed";
  CuptiRecordSelection none = cupti_record_selection("none");
  EXPECT_TRUE(none.kinds.empty());
  EXPECT_FALSE(none.launch_scopes);
  EXPECT_TRUE(cupti_record_selection("launches,runtime").launch_scopes);
  EXPECT_TRUE(cupti_record_selection("kernels").kinds.empty()) << "names are exact";
}

TEST(CudaApiSelection, SummaryKeepsLaunchesCopiesSynchronisationsAndAllocations) {
  for (const char* kept : {"cudaLaunchKernel_v7000", "cuLaunchKernel", "cuLaunchKernelEx", "cudaGraphLaunch_v10000",
                           "cudaMemcpyAsync_v3020", "cuMemcpyHtoDAsync_v2", "cudaMemsetAsync_v3020",
                           "cudaStreamSynchronize_v3020", "cuCtxSynchronize", "cudaMalloc_v3020",
                           "cuMemAlloc_v2", "cudaFree_v3020", "cudaMallocAsync_v11020"}) {
    EXPECT_TRUE(api_kept_in_summary(kept)) << kept;
  }
  // What a GPT call made hundreds of times without the report reading any of it.
  for (const char* skipped : {"cuDevicePrimaryCtxGetState", "cudaGetDevice_v3020", "cudaStreamIsCapturing_v10000",
                              "cuCtxGetCurrent", "cudaGetLastError_v3020", "cudaPeekAtLastError_v3020",
                              "cudaEventRecord_v3020", "cuLibraryLoadData"}) {
    EXPECT_FALSE(api_kept_in_summary(skipped)) << skipped;
  }
}

TEST(CudaApiSelection, CallbackIdsAreFoundByNameInTheRealCupti) {
  auto loaded = load_cupti({TCPROF_TOOLKIT_CUPTI});
  ASSERT_TRUE(loaded.available()) << loaded.error;
  const auto runtime = summary_api_callback_ids(*loaded.api, CUPTI_CB_DOMAIN_RUNTIME_API);
  const auto driver = summary_api_callback_ids(*loaded.api, CUPTI_CB_DOMAIN_DRIVER_API);
  auto has = [](const std::vector<uint32_t>& ids, uint32_t id) { return std::find(ids.begin(), ids.end(), id) != ids.end(); };
  EXPECT_TRUE(has(runtime, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
  EXPECT_TRUE(has(runtime, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020));
  EXPECT_TRUE(has(runtime, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020));
  EXPECT_FALSE(has(runtime, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020));
  EXPECT_TRUE(has(driver, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
  EXPECT_FALSE(has(driver, CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxGetState));
  // A small part of each API.
  EXPECT_LT(runtime.size(), CUPTI_RUNTIME_TRACE_CBID_SIZE / 4);
  EXPECT_LT(driver.size(), CUPTI_DRIVER_TRACE_CBID_SIZE / 4);
  // The collector enables these one by one where the loaded CUPTI exports per-API selection (the
  // CUDA 13 toolkit's does; an older CUPTI may not, and the processor then drops the rest).
  EXPECT_EQ(loaded.api->activity_enable_runtime_api != nullptr,
            dlsym(loaded.api->handle, "cuptiActivityEnableRuntimeApi") != nullptr);
  EXPECT_EQ(loaded.api->activity_enable_driver_api != nullptr,
            dlsym(loaded.api->handle, "cuptiActivityEnableDriverApi") != nullptr);
}

TEST_F(CuptiRecords, SummaryModeKeepsOnlyTheApiCallsTheReportReads) {
  // A CUPTI without per-API selection delivers every call: the processor drops the rest.
  CuptiRecordProcessor p(*writer_, api_, scopes_, 0, ProfileMode::Summary);
  uint64_t ext = scopes_.open({call_, graph_});
  CuptiTestBuffer b;
  b.add(runtime_record(CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, 20, 900, 950))
      .add(external_record(21, ext))
      .add(runtime_record(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 21, 1'000, 1'400))
      .add(kernel_record("gemm", 21, 2'000, 5'000))
      .add(runtime_record(CUPTI_RUNTIME_TRACE_CBID_cudaStreamIsCapturing_v10000, 22, 1'500, 1'600));
  p.buffer_completed(nullptr, 0, b.data(), b.valid_bytes());
  p.end_window();
  EXPECT_EQ(p.stats().api_calls, 1);
  EXPECT_EQ(p.stats().api_skipped, 2);
  writer_->close();
  RunReader r(db_);
  std::vector<std::string> names;
  for (const auto& s : r.kernel_summaries(r.runs().at(0).id)) names.push_back(s.name);
  ASSERT_EQ(names.size(), 2u);
  EXPECT_TRUE(std::find(names.begin(), names.end(), "gemm") != names.end());
  EXPECT_TRUE(std::find_if(names.begin(), names.end(), [](const std::string& n) {
                return n.rfind("cudaLaunchKernel", 0) == 0;
              }) != names.end());
}

TEST_F(CuptiRecords, FullModeKeepsEveryApiCall) {
  CuptiRecordProcessor p(*writer_, api_, scopes_, 0, ProfileMode::Full);
  CuptiTestBuffer b;
  b.add(runtime_record(CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, 20, 900, 950))
      .add(runtime_record(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 21, 1'000, 1'400));
  p.buffer_completed(nullptr, 0, b.data(), b.valid_bytes());
  p.finish();
  EXPECT_EQ(p.stats().api_calls, 2);
  EXPECT_EQ(p.stats().api_skipped, 0);
  EXPECT_EQ(rows().size(), 2u);
}

}  // namespace
}  // namespace tcprof
