// tcprof: the command-line face of the compiler and profiler. Exit codes (PRODUCT.md): 0 success,
// 1 the thing checked failed, 2 usage or input error.
#include <sqlite3.h>

#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/completion.h"
#include "compiler/runtime/torch_info.h"
#include "core/error.h"
#include "core/interrupt.h"
#include "core/libstdcxx_binding.h"
#include "core/schema.h"

#ifndef TCPROF_VERSION
#define TCPROF_VERSION "0.0.0"
#endif
#ifndef TCPROF_HAVE_CUDA
#define TCPROF_HAVE_CUDA 0
#endif

namespace {

// Whether this binary's std::filesystem calls reach libstdc++ (core/libstdcxx_binding.h).
std::string libstdcxx_text() {
  if (tcprof::libstdcxx::restarted()) {
    return "this binary lists LibTorch before libstdc++, so it restarted itself with libstdc++ preloaded "
           "(rebuild it with tcprof's CMake build to avoid the restart)";
  }
  return tcprof::libstdcxx::describe(tcprof::libstdcxx::check());
}

std::string version_text() {
  return fmt::format(
      "tcprof {}\nLibTorch {}\nSQLite {} (database schema {})\nCUDA/CUPTI support: {}\nlibstdc++: {}\n",
      TCPROF_VERSION, tcprof::libtorch_version(), sqlite3_libversion(), tcprof::kSchemaVersion,
      TCPROF_HAVE_CUDA ? "built (loaded at run time when a GPU driver is present)"
                       : "not built (no CUDA toolkit at build time)",
      libstdcxx_text());
}

}  // namespace

int main(int argc, char** argv) {
  tcprof::interrupt::install();  // before any thread starts (LibTorch, OpenMP, the store)
  CLI::App app{"tcprof: makes PyTorch model compilation understandable and fast.\n"
               "Explains graph breaks, guards and recompiles; records runs into SQLite."};
  app.require_subcommand(0, 1);
  bool show_version = false;
  app.add_flag("--version", show_version, "Print versions of tcprof, LibTorch, SQLite and CUDA support");
  bool show_completion = false;
  app.add_flag("--bash-completion", show_completion, "Print a bash completion script")->group("");
  tcprof::cli::add_explain_command(app);
  tcprof::cli::add_run_command(app);
  tcprof::cli::add_breaks_command(app);
  tcprof::cli::add_bench_command(app);
  tcprof::cli::add_report_command(app);
  tcprof::cli::add_export_command(app);
  tcprof::cli::add_check_command(app);
  tcprof::cli::add_diff_command(app);
  tcprof::cli::add_train_command(app);
  tcprof::cli::add_import_command(app);

  try {
    app.parse(argc, argv);
    if (show_version) {
      std::cout << version_text();
      return 0;
    }
    if (show_completion) {
      std::cout << tcprof::cli::bash_completion(app);
      return 0;
    }
    if (app.get_subcommands().empty()) {
      std::cout << app.help();
      return 2;
    }
    return 0;
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "tcprof: " << e.what() << " (see tcprof --help)\n";
    return 2;
  } catch (const tcprof::Error& e) {
    std::cerr << "tcprof: error: " << e.what() << "\n";
    return tcprof::exit_code_for(e.kind());
  } catch (const std::exception& e) {
    // LibTorch errors carry whole graphs and backtraces: the first line says what happened.
    std::string what = e.what();
    std::string first = what.substr(0, what.find('\n', what.find_first_not_of('\n')));
    std::cerr << "tcprof: internal error: " << first << " (please report this with the model)\n";
    return 3;
  }
}
