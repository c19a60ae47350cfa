// The CUPTI collector's side of a sampling summary, on stand-ins for CUPTI's functions that note
// what the collector asks: records switched off for a call not sampled and on again for the next
// sampled one (or for a graph never recorded), no correlation scopes and no flush in a call not
// recorded, scopes balanced, and the counters `report` reads. No GPU needed; what switching costs
// is measured on one (bench --recording-cost).
#include <gtest/gtest.h>

#include <set>

#include "core/run_reader.h"
#include "core/run_writer.h"
#include "profiler/cupti_collector.h"
#include "tests/test_support.h"

namespace tcprof {
namespace {

// What the stand-ins saw; one test at a time runs a collector (CUPTI's callbacks are process-wide).
struct FakeCupti {
  std::set<int> kinds_on;
  std::set<uint32_t> runtime_apis_on, driver_apis_on;
  int switches_on = 0, switches_off = 0;  // enable/disable of CONCURRENT_KERNEL
  int pushes = 0, pops = 0, depth = 0, min_depth = 0, flushes = 0;
};
FakeCupti g_fake;

std::shared_ptr<const CuptiApi> fake_api() {
  auto api = std::make_shared<CuptiApi>();
  api->get_result_string = [](CUptiResult, const char** text) { *text = "fake"; return CUPTI_SUCCESS; };
  api->get_timestamp = [](uint64_t* t) { *t = 1000; return CUPTI_SUCCESS; };
  api->activity_enable = [](CUpti_ActivityKind k) {
    g_fake.kinds_on.insert(k);
    g_fake.switches_on += k == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    return CUPTI_SUCCESS;
  };
  api->activity_disable = [](CUpti_ActivityKind k) {
    g_fake.kinds_on.erase(k);
    g_fake.switches_off += k == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    return CUPTI_SUCCESS;
  };
  api->activity_register_callbacks = [](CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc) {
    return CUPTI_SUCCESS;
  };
  api->activity_flush_all = [](uint32_t) { ++g_fake.flushes; return CUPTI_SUCCESS; };
  api->activity_get_next_record = [](uint8_t*, size_t, CUpti_Activity**) { return CUPTI_ERROR_MAX_LIMIT_REACHED; };
  api->activity_get_num_dropped_records = [](CUcontext, uint32_t, size_t* n) { *n = 0; return CUPTI_SUCCESS; };
  api->activity_push_external_correlation_id = [](CUpti_ExternalCorrelationKind, uint64_t) {
    ++g_fake.pushes;
    ++g_fake.depth;
    return CUPTI_SUCCESS;
  };
  api->activity_pop_external_correlation_id = [](CUpti_ExternalCorrelationKind, uint64_t*) {
    ++g_fake.pops;
    g_fake.min_depth = std::min(g_fake.min_depth, --g_fake.depth);
    return CUPTI_SUCCESS;
  };
  // One launch API a domain: summary keeps it (cuda_api_selection.h), and nothing else.
  api->get_callback_name = [](CUpti_CallbackDomain domain, uint32_t cbid, const char** name) {
    *name = cbid != 1 ? "cudaGetDevice" : domain == CUPTI_CB_DOMAIN_RUNTIME_API ? "cudaLaunchKernel_v7000" : "cuLaunchKernel";
    return CUPTI_SUCCESS;
  };
  api->activity_enable_runtime_api = [](CUpti_CallbackId cbid, uint8_t on) {
    if (on) g_fake.runtime_apis_on.insert(cbid);
    else g_fake.runtime_apis_on.erase(cbid);
    return CUPTI_SUCCESS;
  };
  api->activity_enable_driver_api = [](CUpti_CallbackId cbid, uint8_t on) {
    if (on) g_fake.driver_apis_on.insert(cbid);
    else g_fake.driver_apis_on.erase(cbid);
    return CUPTI_SUCCESS;
  };
  return api;
}

int64_t counter(const std::string& db, const std::string& name) {
  RunReader reader(db);
  for (const auto& [n, v] : reader.counters(reader.runs().back().id)) {
    if (n == name) return v;
  }
  return -1;
}

// One call of the CPU profiler's shape: the call's window, one launch of `graph` in it.
void call(CuptiCollector& c, Id call_id, Id graph) {
  c.call_begin(call_id);
  c.launch_begin(call_id, graph);
  c.launch_end();
  c.call_scope_end();
  c.call_end();
}

TEST(CuptiCollectorSampling, ASummarySwitchesRecordsOffForCallsItDoesNotSample) {
  g_fake = {};
  testing::TempDir dir;
  const std::string db = dir.file("run.db");
  {
    RunInfo info;
    info.command = "run";
    RunWriter writer(db, info);
    CuptiCollector::Options options;
    options.mode = ProfileMode::Summary;
    options.sampling = std::make_shared<GpuCallSampling>(GpuSamplingPolicy{/*first_calls=*/2, /*every=*/3});
    std::string why;
    auto c = CuptiCollector::start_with(writer, fake_api(), options, &why);
    ASSERT_TRUE(c) << why;
    EXPECT_TRUE(g_fake.kinds_on.count(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    EXPECT_EQ(g_fake.kinds_on.count(CUPTI_ACTIVITY_KIND_RUNTIME), 0u) << "summary picks API calls one by one";
    EXPECT_EQ(g_fake.runtime_apis_on, std::set<uint32_t>({1}));

    call(*c, 101, 500);  // sampled: the first two calls
    call(*c, 102, 500);
    EXPECT_EQ(g_fake.pushes, 4) << "a call scope and a launch scope a call";
    EXPECT_EQ(g_fake.flushes, 2);
    EXPECT_EQ(g_fake.switches_off, 0);

    call(*c, 103, 500);  // not sampled
    EXPECT_TRUE(g_fake.kinds_on.empty()) << "every record kind off";
    EXPECT_TRUE(g_fake.runtime_apis_on.empty());
    EXPECT_TRUE(g_fake.driver_apis_on.empty());
    EXPECT_EQ(g_fake.pushes, 4) << "no scopes in a call not recorded";
    EXPECT_EQ(g_fake.flushes, 2) << "nothing to deliver";
    c->launch_begin(0, 0);  // a launch outside every call, records off: nothing to scope
    c->launch_end();
    EXPECT_EQ(g_fake.pushes, 4);

    // Not sampled either, but graph 600 was never recorded: on from its launch, nested inside a
    // launch that opened no scope; only the new launch's scope is pushed (it may be on another
    // thread than the call's).
    c->call_begin(104);
    c->launch_begin(104, 500);
    EXPECT_EQ(g_fake.pushes, 4);
    c->launch_begin(104, 600);
    EXPECT_TRUE(g_fake.kinds_on.count(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    EXPECT_EQ(g_fake.runtime_apis_on, std::set<uint32_t>({1}));
    EXPECT_EQ(g_fake.pushes, 5);
    c->launch_end();
    c->launch_end();
    EXPECT_EQ(g_fake.pops, 5) << "the outer launch pushed nothing and pops nothing";
    c->call_scope_end();
    c->call_end();
    EXPECT_EQ(g_fake.flushes, 3);

    call(*c, 105, 500);  // sampled (the first after the two, in three): records stay on
    // A training step reopens its call for the backward: the same answer, no switching.
    call(*c, 105, 500);
    EXPECT_EQ(g_fake.switches_on, 2) << "at start and for graph 600 only";
    call(*c, 106, 600);  // not sampled, and 600 is recorded now
    EXPECT_TRUE(g_fake.kinds_on.empty());
    EXPECT_EQ(g_fake.switches_off, 2);
    call(*c, 107, 500);  // not sampled; the next is, so its end switches the records on
    EXPECT_TRUE(g_fake.kinds_on.count(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    EXPECT_EQ(g_fake.switches_on, 3);
    const int flushes = g_fake.flushes;
    call(*c, 108, 500);  // sampled: recorded without switching inside it
    EXPECT_EQ(g_fake.switches_on, 3);
    EXPECT_EQ(g_fake.switches_off, 2);
    EXPECT_EQ(g_fake.flushes, flushes + 1);
    EXPECT_EQ(g_fake.pushes, g_fake.pops);
    EXPECT_EQ(g_fake.depth, 0);
    EXPECT_EQ(g_fake.min_depth, 0) << "never popped what was not pushed";
    c.reset();  // stop(): the counters
  }
  EXPECT_EQ(counter(db, "cupti.calls_recorded"), 5);  // 101, 102, 104, 105, 108
  EXPECT_EQ(counter(db, "cupti.calls_skipped"), 3);   // 103, 106, 107
}

// Full records every call and never switches; a sampling shared by collectors started one after
// another (bench's blocks) counts on across them, each writing its own share.
TEST(CuptiCollectorSampling, FullRecordsEveryCallAndSharedSamplingCountsAcrossCollectors) {
  g_fake = {};
  testing::TempDir dir;
  const std::string db = dir.file("run.db");
  {
    RunInfo info;
    info.command = "bench";
    RunWriter writer(db, info);
    std::string why;
    CuptiCollector::Options full;
    full.mode = ProfileMode::Full;
    {
      auto c = CuptiCollector::start_with(writer, fake_api(), full, &why);
      ASSERT_TRUE(c) << why;
      EXPECT_TRUE(g_fake.kinds_on.count(CUPTI_ACTIVITY_KIND_RUNTIME)) << "full keeps every API call";
      for (Id id = 1; id <= 5; ++id) call(*c, id, 500);
      EXPECT_EQ(g_fake.switches_off, 0);
      EXPECT_EQ(g_fake.flushes, 5);
    }
    CuptiCollector::Options summary;
    summary.mode = ProfileMode::Summary;
    summary.sampling = std::make_shared<GpuCallSampling>(GpuSamplingPolicy{/*first_calls=*/1, /*every=*/4});
    Id id = 10;
    for (int block = 0; block < 3; ++block) {
      auto c = CuptiCollector::start_with(writer, fake_api(), summary, &why);
      ASSERT_TRUE(c) << why;
      for (int k = 0; k < 3; ++k) call(*c, ++id, 500);
    }
  }
  // Full: 5 of 5. Summary over 9 calls: the 1st, then the 5th and 9th.
  EXPECT_EQ(counter(db, "cupti.calls_recorded"), 5 + 3);
  EXPECT_EQ(counter(db, "cupti.calls_skipped"), 6);
}

}  // namespace
}  // namespace tcprof
