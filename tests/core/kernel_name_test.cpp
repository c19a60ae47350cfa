// Kernel names as users read them: demangled where they enter the store, the mangled original kept
// in its own column, and older files' names demangled as they are read.
#include <gtest/gtest.h>

#include "core/kernel_name.h"
#include "core/run_reader.h"
#include "core/run_writer.h"
#include "core/sqlite_db.h"
#include "tests/test_support.h"

namespace tcprof {
namespace {

using testing::TempDir;

// One of the kernels CUPTI reported on the H200 (tests/fixtures/gpu_runs), and one of tcprof's.
constexpr const char* kMangled =
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_";
constexpr const char* kDemangled =
    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
    "std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)";

TEST(KernelName, MangledCudaKernelsAreDemangledAndOthersKept) {
  EXPECT_EQ(demangled_kernel_name(kMangled), kDemangled);
  // Not mangled, or not demangleable: unchanged.
  EXPECT_EQ(demangled_kernel_name("sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32"),
            "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32");
  EXPECT_EQ(demangled_kernel_name("cudaLaunchKernel"), "cudaLaunchKernel");
  EXPECT_EQ(demangled_kernel_name("_Zgarbage"), "_Zgarbage");
  EXPECT_EQ(demangled_kernel_name("_Z"), "_Z");
  EXPECT_EQ(demangled_kernel_name(""), "");
}

TEST(KernelName, ShortNamesDropReturnTypeParametersAndTemplateArguments) {
  EXPECT_EQ(short_kernel_name(kDemangled), "at::native::vectorized_elementwise_kernel<…>");
  EXPECT_EQ(short_kernel_name("void (anonymous namespace)::softmax_warp_forward<float, 4>(float*, int)"),
            "(anonymous namespace)::softmax_warp_forward<…>");
  EXPECT_EQ(short_kernel_name("void gemv2T_kernel_val<int, int, float>(float)"), "gemv2T_kernel_val<…>");
  // Names that are not signatures stay whole.
  EXPECT_EQ(short_kernel_name("fused_add_relu_3"), "fused_add_relu_3");
  EXPECT_EQ(short_kernel_name("Memcpy HtoD (Pageable -> Device)"), "Memcpy HtoD (Pageable -> Device)");
}

TEST(KernelName, TheStoreKeepsTheDemangledNameAndTheMangledOneApart) {
  TempDir dir;
  const std::string db = dir.file("names.db");
  Id run = 0;
  {
    RunInfo info;
    info.command = "run";
    RunWriter w(db, info);
    run = w.run_id();
    KernelEvent k;
    k.name_id = w.intern(kMangled);
    k.kind_id = w.intern("gpu");
    k.device_id = w.intern("cuda");
    k.duration_ns = 10;
    w.record(k);
    k.name_id = w.intern("fused_add_relu_3");
    w.record(k);
    KernelSummaryEvent s;
    s.name_id = w.intern(kMangled);
    s.kind_id = w.intern("gpu");
    s.count = 3;
    s.total_ns = 30;
    w.record(s);
  }
  Database raw(db, Database::Mode::ReadOnly);
  auto st = raw.prepare("SELECT name, coalesce(mangled_name, 'NULL') FROM kernels ORDER BY id");
  ASSERT_TRUE(st.step());
  EXPECT_EQ(st.text(0), kDemangled);
  EXPECT_EQ(st.text(1), kMangled);
  ASSERT_TRUE(st.step());
  EXPECT_EQ(st.text(0), "fused_add_relu_3");
  EXPECT_EQ(st.text(1), "NULL");
  auto summary = raw.prepare("SELECT name, mangled_name FROM kernel_summaries");
  ASSERT_TRUE(summary.step());
  EXPECT_EQ(summary.text(0), kDemangled);
  EXPECT_EQ(summary.text(1), kMangled);

  RunReader reader(db);
  std::vector<KernelRow> rows;
  reader.for_each_kernel(run, [&](const KernelRow& r) { rows.push_back(r); });
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].name, kDemangled);
  EXPECT_EQ(rows[0].mangled_name, kMangled);
  EXPECT_EQ(rows[1].mangled_name, "");
  // Summary launches count among the run's kernels.
  EXPECT_EQ(reader.counts(run).kernels, 5);
  EXPECT_EQ(reader.counts(run).kernel_rows, 2);
}

TEST(KernelName, ADatabaseWrittenBeforeDemanglingIsReadDemangled) {
  // The H200's GPT run, schema 5: names stored as CUPTI reported them.
  RunReader reader(std::string(TCPROF_GPU_RUNS) + "/gpt_summary_h200.db");
  ASSERT_EQ(reader.schema_version(), 5);
  const Id run = reader.runs().front().id;
  int mangled = 0, demangled = 0;
  for (const KernelSummaryRow& r : reader.kernel_summaries(run)) {
    EXPECT_FALSE(looks_mangled(r.name)) << r.name;
    if (!r.mangled_name.empty()) {
      ++mangled;
      EXPECT_TRUE(looks_mangled(r.mangled_name));
      EXPECT_EQ(demangled_kernel_name(r.mangled_name), r.name);
    }
    if (r.name.rfind("void at::native::", 0) == 0) ++demangled;
  }
  EXPECT_GT(mangled, 10);
  EXPECT_GT(demangled, 10);
  // A summary-mode run's kernels are its summaries' launches (the GUI once said "0 kernels").
  EXPECT_EQ(reader.counts(run).kernel_rows, 0);
  EXPECT_GT(reader.counts(run).kernels, 100'000);
}

}  // namespace
}  // namespace tcprof
