#include "gui/source_view.h"

#include <QFontDatabase>
#include <QPainter>
#include <QTextBlock>

#include "gui/python_highlighter.h"

namespace tcprof::gui {

class SourceView::Gutter : public QWidget {
 public:
  explicit Gutter(SourceView* view) : QWidget(view), view_(view) {}
  QSize sizeHint() const override { return {view_->gutterWidth(), 0}; }

 protected:
  void paintEvent(QPaintEvent* event) override { view_->paintGutter(event); }

 private:
  SourceView* view_;
};

SourceView::SourceView(QWidget* parent) : QPlainTextEdit(parent), gutter_(new Gutter(this)) {
  setReadOnly(true);
  setLineWrapMode(QPlainTextEdit::NoWrap);
  setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  new PythonHighlighter(document());  // recorded sources are the user's Python model code
  setViewportMargins(gutterWidth(), 0, 0, 0);
  connect(this, &QPlainTextEdit::updateRequest, this, [this](const QRect& rect, int dy) {
    if (dy) gutter_->scroll(0, dy);
    else gutter_->update(0, rect.y(), gutter_->width(), rect.height());
  });
}

int SourceView::gutterWidth() const {
  int max_number = 1;
  for (int n : numbers_) max_number = std::max(max_number, n);
  const int digits = QString::number(max_number).size();
  return 12 + fontMetrics().horizontalAdvance(QLatin1Char('9')) * std::max(3, digits);
}

void SourceView::resizeEvent(QResizeEvent* event) {
  QPlainTextEdit::resizeEvent(event);
  updateGutterGeometry();
}

void SourceView::updateGutterGeometry() {
  const QRect r = contentsRect();
  gutter_->setGeometry(QRect(r.left(), r.top(), gutterWidth(), r.height()));
}

void SourceView::paintGutter(QPaintEvent* event) {
  QPainter p(gutter_);
  p.fillRect(event->rect(), palette().color(QPalette::AlternateBase));
  QTextBlock block = firstVisibleBlock();
  int top = qRound(blockBoundingGeometry(block).translated(contentOffset()).top());
  while (block.isValid() && top <= event->rect().bottom()) {
    const int height = qRound(blockBoundingRect(block).height());
    const int index = block.blockNumber();
    if (index < static_cast<int>(numbers_.size()) && numbers_[index] > 0) {
      const bool hot = index == highlight_block_;
      p.setPen(hot ? QColor(0xb3261e) : palette().color(QPalette::PlaceholderText));
      QFont f = font();
      f.setBold(hot);
      p.setFont(f);
      p.drawText(0, top, gutter_->width() - 6, height, Qt::AlignRight | Qt::AlignVCenter,
                 QString::number(numbers_[index]));
    }
    block = block.next();
    top += height;
  }
}

void SourceView::showFile(const QString& text, int highlight_line) {
  QStringList lines = text.split('\n');
  if (!lines.isEmpty() && lines.back().isEmpty()) lines.removeLast();
  numbers_.clear();
  for (int i = 0; i < lines.size(); ++i) numbers_.push_back(i + 1);
  highlight_line_ = highlight_line;
  highlight_block_ = highlight_line - 1;
  setPlainText(lines.join('\n'));
  applyHighlight();
}

void SourceView::showFragments(const std::map<int, QString>& lines, int highlight_line, const QString& note) {
  numbers_.clear();
  QStringList text;
  if (!note.isEmpty()) {
    numbers_.push_back(0);
    text << note;
  }
  int previous = 0;
  highlight_block_ = -1;
  for (const auto& [number, line] : lines) {
    if (previous != 0 && number > previous + 1) {  // a gap
      numbers_.push_back(0);
      text << QString::fromUtf8("    ⋯");
    }
    if (number == highlight_line) highlight_block_ = static_cast<int>(numbers_.size());
    numbers_.push_back(number);
    text << line;
    previous = number;
  }
  highlight_line_ = highlight_line;
  setPlainText(text.join('\n'));
  applyHighlight();
}

void SourceView::clearSource(const QString& message) {
  numbers_.clear();
  highlight_line_ = 0;
  highlight_block_ = -1;
  setPlainText(message);
  setExtraSelections({});
}

QString SourceView::highlightedText() const {
  if (highlight_block_ < 0) return {};
  return document()->findBlockByNumber(highlight_block_).text();
}

void SourceView::applyHighlight() {
  setViewportMargins(gutterWidth(), 0, 0, 0);
  updateGutterGeometry();
  QList<QTextEdit::ExtraSelection> selections;
  const QTextBlock block = document()->findBlockByNumber(highlight_block_);
  if (highlight_block_ >= 0 && block.isValid()) {
    QTextEdit::ExtraSelection s;
    s.format.setBackground(QColor(0xffe08a));
    s.format.setProperty(QTextFormat::FullWidthSelection, true);
    s.cursor = QTextCursor(block);
    selections << s;
    setTextCursor(QTextCursor(block));
    centerCursor();
  }
  setExtraSelections(selections);
  gutter_->update();
}


}  // namespace tcprof::gui
