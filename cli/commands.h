// Each tcprof subcommand registers itself on the CLI11 app. Commands only read and present; the
// compiler and profiler do the work and the store holds the results.
#pragma once

namespace CLI {
class App;
}

namespace tcprof::cli {

void add_report_command(CLI::App& app);
void add_export_command(CLI::App& app);
void add_explain_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_breaks_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_check_command(CLI::App& app);
void add_diff_command(CLI::App& app);
void add_train_command(CLI::App& app);
void add_import_command(CLI::App& app);

}  // namespace tcprof::cli
