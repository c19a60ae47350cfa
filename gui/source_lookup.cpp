#include "gui/source_lookup.h"

#include <QFileInfo>

#include "gui/model_archive.h"

namespace tcprof::gui {

void show_source(SourceView* view, const RunData& run, const std::string& file, int line,
                 const QString& missing_line) {
  const QString path = QString::fromStdString(file);
  const QStringList dirs = {QFileInfo(run.path).absolutePath(),
                            QFileInfo(QString::fromStdString(run.run.model_path)).absolutePath()};
  const QString text = SourceView::readSourceFile(path, dirs);
  if (!text.isEmpty()) {
    view->showFile(text, line);
    return;
  }
  std::map<int, QString> lines;
  if (run.archive) lines = run.archive->lines(path);
  // Lines recorded with the run's breaks fill gaps the archive leaves (or stand alone).
  for (const BreakSite& s : run.break_sites) {
    if (s.file == file && s.line > 0 && !s.source.empty()) lines.emplace(s.line, QString::fromStdString(s.source));
  }
  if (lines.empty() && missing_line.isEmpty()) {
    view->clearSource(QString("No source recorded for %1:%2").arg(path).arg(line));
    return;
  }
  if (!lines.count(line)) lines[line] = missing_line;
  view->showFragments(lines, line);
}

}  // namespace tcprof::gui
