// The one look every row table in the app shares: whole-row selection, no row numbers,
// alternating rows, no wrapping.
#pragma once

class QAbstractItemModel;
class QTableView;

namespace tcprof::gui {

// Stretches `stretch_column`, or the last column with single selection when it is negative.
QTableView* make_row_table(QAbstractItemModel* model, int stretch_column = -1);

}  // namespace tcprof::gui
