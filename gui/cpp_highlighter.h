// Syntax highlighting for generated C++ (and, with the same rules, the graph IR): keywords,
// types, numbers, strings, comments and preprocessor lines. Regex based: generated code is
// regular enough that a real parser would buy nothing here.
#pragma once
#include <QRegularExpression>
#include <QSyntaxHighlighter>
#include <QTextCharFormat>
#include <vector>

namespace tcprof::gui {

class CppHighlighter : public QSyntaxHighlighter {
  Q_OBJECT
 public:
  explicit CppHighlighter(QTextDocument* document);

 protected:
  void highlightBlock(const QString& text) override;

 private:
  struct Rule {
    QRegularExpression pattern;
    QTextCharFormat format;
  };
  std::vector<Rule> rules_;
  QRegularExpression comment_start_, comment_end_;
  QTextCharFormat comment_format_;
};

}  // namespace tcprof::gui
