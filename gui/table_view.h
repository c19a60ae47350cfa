// The one look every row table in the app shares: whole-row selection, no row numbers,
// alternating rows, no wrapping; and the title above a table in a splitter pane.
#pragma once

class QAbstractItemModel;
class QString;
class QTableView;
class QWidget;

namespace tcprof::gui {

// Stretches `stretch_column`, or the last column with single selection when it is negative.
QTableView* make_row_table(QAbstractItemModel* model, int stretch_column = -1);

// `w` under a one-line rich-text title ("<b>Compiles</b> (time by stage)"), as splitter panes.
QWidget* titled(const QString& title, QWidget* w);

}  // namespace tcprof::gui
