#include "gui/run_data.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>

#include "analysis/recompiles.h"

namespace tcprof::gui {

QString RunData::title() const {
  QString model = QFileInfo(QString::fromStdString(run.model_path)).fileName();
  if (model.isEmpty()) model = QFileInfo(path).fileName();
  return QString("%1 · run %2 (%3)").arg(model).arg(run.id).arg(QString::fromStdString(run.command));
}

const CompileRow* RunData::compile(Id id) const {
  for (const auto& c : compiles) {
    if (c.id == id) return &c;
  }
  return nullptr;
}

const FrameRow* RunData::frame(Id id) const {
  for (const auto& f : frames) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

RunDataPtr load_run_data(const QString& path, Id run_id,
                         const std::function<void(const QString&, double)>& stage) {
  auto report = [&](const QString& text, double fraction) {
    if (stage) stage(text, fraction);
  };
  report("Opening database", 0.0);
  RunReader reader(path.toStdString());
  auto data = std::make_shared<RunData>();
  data->path = path;
  if (auto run = reader.run(run_id)) data->run = *run;
  report("Reading summary", 0.05);
  data->summary = analysis::summarize_run(reader, run_id);
  data->time_range = reader.time_range(run_id);
  data->frames = reader.frames(run_id);
  data->compiles = reader.compiles(run_id);
  data->phases = reader.compile_phases(run_id);
  data->graphs = reader.graphs(run_id);
  data->guards = reader.guards(run_id);
  data->compile_time = analysis::compile_time(reader, run_id);
  report("Reading graph breaks and recompiles", 0.1);
  data->break_sites = analysis::break_sites(reader, run_id);
  data->recompiles = analysis::recompiles_with_failures(reader, run_id);
  data->guard_failures = reader.guard_failures(run_id);
  data->calls = reader.calls(run_id);
  data->call_shapes.reserve(data->calls.size());
  for (const CallRow& call : data->calls) {
    std::vector<std::vector<int64_t>> inputs;
    const QJsonArray array = QJsonDocument::fromJson(QByteArray::fromStdString(call.input_shapes)).array();
    for (const QJsonValue& input : array) {
      std::vector<int64_t> dims;
      for (const QJsonValue& d : input.toArray()) dims.push_back(static_cast<int64_t>(d.toDouble()));
      inputs.push_back(std::move(dims));
    }
    data->call_shapes.push_back(std::move(inputs));
  }
  data->steps = reader.steps(run_id);
  data->sources = analysis::SourceIndex::of_run(reader, run_id);
  data->perf_hints = reader.perf_hints(run_id);
  data->view = analysis::view_run(reader, run_id);
  data->graph_times = reader.graph_kernel_times(run_id);
  data->ranks = analysis::rank_divergence(reader, run_id);
  const double total = std::max<int64_t>(1, data->summary.counts.kernel_rows);
  report("Reading kernels", 0.15);
  data->kernels.load(reader, run_id, [&](int64_t done) {
    report(QString("Reading kernels (%1 of %2)").arg(done).arg(data->summary.counts.kernel_rows),
           0.15 + 0.75 * static_cast<double>(done) / total);
  });
  report("Summarising kernels", 0.92);
  data->kernel_summary = data->kernels.summarize();
  data->gpu_calls = analysis::gpu_call_coverage(reader.counters(run_id));
  const auto launch = analysis::launch_pressure(data->calls, data->compiles, reader.call_kind_times(run_id));
  data->problems = analysis::find_problems({data->summary, data->break_sites, data->recompiles, data->time_range,
                                            data->kernel_summary, data->perf_hints, launch});
  report("Done", 1.0);
  return data;
}

}  // namespace tcprof::gui
