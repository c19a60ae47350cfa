#include "gui/overview_view.h"

#include <QJsonDocument>
#include <QLocale>
#include <QScrollBar>
#include <QVBoxLayout>

#include "gui/format.h"

namespace tcprof::gui {
namespace {

QString escaped(const std::string& s) { return html_escape(QString::fromStdString(s)); }

QString view_title(const QString& view) {
  if (view == "breaks") return "Graph breaks";
  if (view == "recompiles") return "Recompiles";
  if (view == "kernels") return "Kernels";
  if (view == "graphs") return "Graphs";
  if (view == "training") return "Training";
  return view;
}

// A count that links to the view listing those things.
QString count_cell(const QString& label, int64_t value, bool bad, const QString& view) {
  return QString("<td align='center' style='padding:6px 14px'><a href='view:%4' style='text-decoration:none'>"
                 "<span style='font-size:20pt;%1'>%2</span></a><br><span style='color:#555'>%3</span></td>")
      .arg(bad && value > 0 ? "color:#b3261e" : "color:#1d3557", format_count(value), label, view);
}

}  // namespace

OverviewView::OverviewView(QWidget* parent) : RunView(parent), browser_(new QTextBrowser) {
  browser_->setOpenLinks(false);
  browser_->setFrameShape(QFrame::NoFrame);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(browser_);
  connect(browser_, &QTextBrowser::anchorClicked, this, [this](const QUrl& url) {
    if (url.scheme() == "view") emit openView(url.path());
  });
}

void OverviewView::setRun(const RunDataPtr& run) {
  run_ = run;
  if (!run) {
    browser_->setHtml("<h2>No run selected</h2><p>Open a tcprof database (Ctrl+O) or drop one here.</p>");
    return;
  }
  const RunRow& r = run->run;
  const RunCounts& s = run->summary.counts;
  QString html;
  const bool live = r.status == "running";
  html += QString("<h2 style='margin-bottom:0'>%1</h2>").arg(html_escape(run->title()));
  html += QString("<p style='color:#555;margin-top:2px'>%1 · started %2 · status <b style='color:%3'>%4</b>%5</p>")
              .arg(html_escape(run->path), escaped(r.started_at), live ? "#b26a00" : r.status == "finished" ? "#2d6a4f" : "#b00020", escaped(analysis::status_text(r)),
                   live ? " (live: refreshing every second)" : "");

  // Problems first: that is what the user opened the file for.
  const auto& problems = run->problems;
  html += "<h3>Biggest problems</h3>";
  if (problems.empty()) {
    html += "<p>No graph breaks, no recompiles, no eager calls: this run compiled cleanly.</p>";
  } else {
    html += "<table cellspacing='0' cellpadding='6' width='100%'>";
    int n = 1;
    for (const analysis::Problem& p : problems) {
      html += QString("<tr><td valign='top' style='font-size:14pt;color:#b3261e'><b>%1</b></td>"
                      "<td><b>%2</b><br>%3<br><a href='view:%4'>Show in %5 →</a></td></tr>")
                  .arg(n++)
                  .arg(html_escape(q(p.title)), html_escape(q(p.detail)), q(p.view), view_title(q(p.view)));
    }
    html += "</table>";
  }

  html += "<h3>Counts</h3><table cellspacing='0'><tr>";
  html += count_cell("graphs", s.graphs, false, "graphs");
  html += count_cell("graph breaks", s.graph_breaks, true, "breaks");
  html += count_cell("break sites", run->summary.break_sites, true, "breaks");
  html += count_cell("recompiles", s.recompiles, true, "recompiles");
  html += count_cell("guard failures", s.guard_failures, true, "recompiles");
  html += count_cell("eager calls", s.eager_calls, true, "recompiles");
  html += "</tr><tr>";
  html += count_cell("calls", s.calls, false, "recompiles");
  html += count_cell("compiles", s.compiles, false, "graphs");
  html += count_cell("guards", s.guards, false, "graphs");
  html += count_cell("kernels", s.kernels, false, "kernels");
  html += count_cell("steps", s.steps, false, "training");
  html += count_cell("perf hints", s.perf_hints, false, "graphs");
  html += "</tr></table>";

  html += "<h3>Time</h3><table cellpadding='3'>";
  html += QString("<tr><td>Compile time</td><td><b>%1</b> over %2 compile(s)</td></tr>")
              .arg(format_ns(static_cast<double>(s.compile_time_ns))).arg(s.compiles);
  if (s.calls > 0) {
    const analysis::CallTiming& t = run->summary.call_timing;
    const QString mean = QString("mean incl. compile %1").arg(format_ns(t.mean_incl_compile_ns));
    html += QString("<tr><td>Per call</td><td>%1</td></tr>")
                .arg(t.has_steady() ? QString("steady median <b>%1</b>/call · %2").arg(format_ns(t.steady_median_ns), mean)
                                    : mean + "/call (every call compiled)");
  }
  if (run->summary.peak_gpu_bytes > 0) {
    html += QString("<tr><td>Peak GPU memory</td><td><b>%1</b> in a call (CUDA caching allocator)</td></tr>")
                .arg(QLocale::c().formattedDataSize(run->summary.peak_gpu_bytes));
  }
  if (s.steps > 0) html += QString("<tr><td>Per step (median)</td><td><b>%1 ms</b></td></tr>").arg(run->summary.ms_per_step, 0, 'f', 3);
  if (!run->time_range.empty()) {
    html += QString("<tr><td>Recorded span</td><td>%1</td></tr>")
                .arg(format_ns(static_cast<double>(run->time_range.end_ns - run->time_range.start_ns)));
  }
  html += "</table>";

  html += "<h3>Run</h3><table cellpadding='3'>";
  auto row = [&](const char* k, const QString& v) {
    html += QString("<tr><td style='color:#555'>%1</td><td>%2</td></tr>").arg(k, v.isEmpty() ? "—" : v);
  };
  row("Command", escaped(r.command));
  row("Model", escaped(r.model_path));
  row("Model SHA-256", QString("<code>%1</code>").arg(escaped(r.model_sha256.substr(0, 16))));
  row("Stance", QString("<b>%1</b>").arg(escaped(r.stance)));
  row("Device", escaped(r.device));
  row("LibTorch", escaped(r.libtorch_version));
  if (r.dropped_events > 0) row("Dropped events", QString("<b style='color:#b3261e'>%1</b>").arg(r.dropped_events));
  html += "</table>";
  const QJsonDocument config = QJsonDocument::fromJson(QByteArray::fromStdString(r.config_json));
  const QString config_text = config.isNull() ? QString::fromStdString(r.config_json)
                                              : QString::fromUtf8(config.toJson(QJsonDocument::Indented));
  html += QString("<p style='color:#555;margin-bottom:2px'>Configuration</p><pre style='background:#f4f4f4'>%1</pre>")
              .arg(html_escape(config_text.trimmed()));
  const int scroll = browser_->verticalScrollBar() ? browser_->verticalScrollBar()->value() : 0;
  browser_->setHtml(html);
  browser_->verticalScrollBar()->setValue(scroll);  // live refreshes keep the reading position
}

}  // namespace tcprof::gui
