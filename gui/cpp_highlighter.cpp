#include "gui/cpp_highlighter.h"

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

CppHighlighter::CppHighlighter(QTextDocument* document)
    : QSyntaxHighlighter(document),
      comment_start_(QStringLiteral("/\\*")),
      comment_end_(QStringLiteral("\\*/")),
      comment_format_(make_format(QColor(0x6a, 0x73, 0x7d), false, true)) {
  // Later rules win where they overlap (strings and comments last).
  rules_.push_back({QRegularExpression(
                        "\\b(auto|break|case|const|constexpr|continue|default|do|else|extern|for|"
                        "if|inline|namespace|return|static|struct|switch|template|typename|using|"
                        "while|restrict|__restrict__|__global__|__device__|pragma|omp|parallel)\\b"),
                    make_format(QColor(0x8b, 0x1e, 0x8f), true)});
  rules_.push_back({QRegularExpression("\\b(void|bool|char|int|long|float|double|unsigned|signed|"
                                       "size_t|int8_t|int16_t|int32_t|int64_t|uint8_t|uint32_t|"
                                       "uint64_t|half|bf16|f32|f64|i64|i32)\\b"),
                    make_format(QColor(0x00, 0x5c, 0xc5))});
  rules_.push_back({QRegularExpression("\\b(aten|prim|tcprof)::[A-Za-z_0-9]+"), make_format(QColor(0x00, 0x7a, 0x78))});
  rules_.push_back({QRegularExpression("%[A-Za-z_0-9.]+"), make_format(QColor(0x95, 0x5f, 0x00))});
  rules_.push_back({QRegularExpression("\\b[0-9]+(\\.[0-9]*)?([eE][-+]?[0-9]+)?[fFuUlL]*\\b"),
                    make_format(QColor(0x09, 0x86, 0x58))});
  rules_.push_back({QRegularExpression("^\\s*#.*$"), make_format(QColor(0x9a, 0x55, 0x00))});
  rules_.push_back({QRegularExpression("\"(\\\\.|[^\"\\\\])*\""), make_format(QColor(0xa3, 0x15, 0x15))});
  rules_.push_back({QRegularExpression("//[^\n]*"), comment_format_});
}

void CppHighlighter::highlightBlock(const QString& text) {
  for (const Rule& rule : rules_) {
    for (auto it = rule.pattern.globalMatch(text); it.hasNext();) {
      const auto m = it.next();
      setFormat(static_cast<int>(m.capturedStart()), static_cast<int>(m.capturedLength()), rule.format);
    }
  }
  // Block comments may span lines: block state 1 = inside a comment.
  setCurrentBlockState(0);
  qsizetype start = previousBlockState() == 1 ? 0 : text.indexOf(comment_start_);
  while (start >= 0) {
    const auto end = comment_end_.match(text, start);
    qsizetype length;
    if (!end.hasMatch()) {
      setCurrentBlockState(1);
      length = text.size() - start;
    } else {
      length = end.capturedEnd() - start;
    }
    setFormat(static_cast<int>(start), static_cast<int>(length), comment_format_);
    start = text.indexOf(comment_start_, start + length);
  }
}

}  // namespace tcprof::gui
