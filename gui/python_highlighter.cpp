#include "gui/python_highlighter.h"

namespace tcprof::gui {
namespace {
QTextCharFormat make_format(const QColor& color, bool bold = false, bool italic = false) {
  QTextCharFormat f;
  f.setForeground(color);
  if (bold) f.setFontWeight(QFont::Bold);
  f.setFontItalic(italic);
  return f;
}
}  // namespace

PythonHighlighter::PythonHighlighter(QTextDocument* document) : QSyntaxHighlighter(document) {
  rules_.push_back({QRegularExpression("\\b(and|as|assert|break|class|continue|def|del|elif|else|except|"
                                       "finally|for|from|if|import|in|is|lambda|not|or|pass|raise|"
                                       "return|try|while|with|yield|None|True|False)\\b"),
                    make_format(QColor(0x8b, 0x1e, 0x8f), true)});
  rules_.push_back({QRegularExpression("\\bself\\b"), make_format(QColor(0x95, 0x5f, 0x00))});
  rules_.push_back({QRegularExpression("\\b(torch|nn|F)\\b"), make_format(QColor(0x00, 0x7a, 0x78))});
  rules_.push_back({QRegularExpression("(?<=\\bdef |\\bclass )[A-Za-z_][A-Za-z_0-9]*"),
                    make_format(QColor(0x00, 0x5c, 0xc5), true)});
  rules_.push_back({QRegularExpression("\\b[0-9]+(\\.[0-9]*)?([eE][-+]?[0-9]+)?\\b"), make_format(QColor(0x09, 0x86, 0x58))});
  rules_.push_back({QRegularExpression("(\"(\\\\.|[^\"\\\\])*\"|'(\\\\.|[^'\\\\])*')"), make_format(QColor(0xa3, 0x15, 0x15))});
  rules_.push_back({QRegularExpression("#[^\n]*$"), make_format(QColor(0x6a, 0x73, 0x7d), false, true)});
}

void PythonHighlighter::highlightBlock(const QString& text) {
  for (const Rule& rule : rules_) {
    for (auto it = rule.pattern.globalMatch(text); it.hasNext();) {
      const auto m = it.next();
      setFormat(static_cast<int>(m.capturedStart()), static_cast<int>(m.capturedLength()), rule.format);
    }
  }
}

}  // namespace tcprof::gui
