#include "gui/source_lookup.h"

namespace tcprof::gui {

void show_source(SourceView* view, const RunData& run, const std::string& file, int line,
                 const QString& missing_line) {
  if (const SourceRow* recorded = run.sources.file(file)) {
    view->showFile(QString::fromStdString(recorded->text), line);
    return;
  }
  // Not recorded: a run from before sources were stored, or a file the model's debug info does
  // not reference. Only the lines recorded with the run's breaks (and the caller's) are known.
  const QString path = QString::fromStdString(file);
  std::map<int, QString> lines;
  for (const analysis::BreakSite& s : run.break_sites) {
    if (s.file == file && s.line > 0 && !s.source.empty()) lines.emplace(s.line, QString::fromStdString(s.source));
  }
  const QString note = QString("# the source of %1 is not recorded in this database").arg(path);
  if (lines.empty() && missing_line.isEmpty()) {
    view->clearSource(QString("No source recorded for %1:%2 (the source of %1 is not recorded in this database)")
                          .arg(path)
                          .arg(line));
    return;
  }
  if (!lines.count(line)) lines[line] = missing_line;
  view->showFragments(lines, line, note);
}

}  // namespace tcprof::gui
