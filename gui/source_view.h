// Read-only source text with real line numbers in a gutter and one highlighted line (the break
// or guard site): a whole file, or only the lines known, with gaps marked, so the line is never
// missing.
#pragma once
#include <QPlainTextEdit>
#include <map>
#include <vector>

namespace tcprof::gui {

class SourceView : public QPlainTextEdit {
  Q_OBJECT
 public:
  explicit SourceView(QWidget* parent = nullptr);

  // Whole file text; line numbers start at 1.
  void showFile(const QString& text, int highlight_line);
  // Only some lines known (line number -> text); gaps are shown as "⋯". A `note` (why only these
  // lines) comes first, without a line number.
  void showFragments(const std::map<int, QString>& lines, int highlight_line, const QString& note = {});
  void clearSource(const QString& message);

  int highlightedLine() const { return highlight_line_; }
  QString highlightedText() const;  // text of the highlighted line, for tests

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  class Gutter;
  void paintGutter(QPaintEvent* event);
  int gutterWidth() const;
  void updateGutterGeometry();
  void applyHighlight();

  Gutter* gutter_;
  std::vector<int> numbers_;  // line number shown for each block; 0 = gap marker
  int highlight_line_ = 0;
  int highlight_block_ = -1;
};

}  // namespace tcprof::gui
