// Calls a language model compiled by tcprof in a loop of your own, with a sequence length that
// changes from call to call, checks each output against the uncompiled model and records the run.
//   record_calls MODEL.pt RUN.db     (e.g. tcprof's sample gpt_tiny.pt, tokens in 0..511)
// Then: tcprof report RUN.db, or tcprof-gui RUN.db.
#include <cstdio>
#include <exception>

#include <ATen/ATen.h>
#include <tcprof/tcprof.h>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s MODEL.pt RUN.db\n", argv[0]);
    return 2;
  }
  try {
    tcprof::Options options;
    options.db = argv[2];
    options.command = "record_calls";
    options.dynamic = {{0, 1}};  // the sequence length varies: symbolic from the first compile
    tcprof::Module model = tcprof::Module::load(argv[1], options);

    at::manual_seed(0);
    for (int64_t length : {8, 16, 24, 16, 32, 8}) {
      at::Tensor tokens = at::randint(0, 512, {2, length}, at::kLong);
      at::Tensor compiled = model({tokens}).toTensor();
      at::Tensor eager = model.eager({tokens}).toTensor();
      if (!at::allclose(compiled, eager, 1e-4, 1e-5)) {
        std::fprintf(stderr, "length %lld: the compiled output differs from eager\n", static_cast<long long>(length));
        model.fail();
        return 1;
      }
    }
    tcprof::Stats s = model.stats();
    model.finish();
    std::printf("%lld calls, %lld compiles, %lld recompiles, %lld graph breaks; recorded in %s (run %lld)\n",
                static_cast<long long>(s.calls), static_cast<long long>(s.compiles),
                static_cast<long long>(s.recompiles), static_cast<long long>(s.graph_breaks),
                model.db_path().c_str(), static_cast<long long>(model.run_id()));
    return 0;
  } catch (const tcprof::Error& e) {
    std::fprintf(stderr, "record_calls: %s\n", e.what());
    return tcprof::exit_code_for(e.kind());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "record_calls: %s\n", e.what());
    return 3;
  }
}
