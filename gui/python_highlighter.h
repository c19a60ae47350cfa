// Light syntax highlighting for the user's Python source in the break and guard views, so the
// highlighted line reads like it does in the user's editor.
#pragma once
#include <QRegularExpression>
#include <QSyntaxHighlighter>
#include <QTextCharFormat>
#include <vector>

namespace tcprof::gui {

class PythonHighlighter : public QSyntaxHighlighter {
  Q_OBJECT
 public:
  explicit PythonHighlighter(QTextDocument* document);

 protected:
  void highlightBlock(const QString& text) override;

 private:
  struct Rule {
    QRegularExpression pattern;
    QTextCharFormat format;
  };
  std::vector<Rule> rules_;  // later rules win where they overlap (strings, then comments)
};

}  // namespace tcprof::gui
