// Where the views find the user's source for a file:line: the file as the run recorded it (the
// database's `sources`, never the file on this disk, which may have changed since), else the lines
// recorded with its breaks, marked as such. Breaks and guards share this, so both show the same.
#pragma once
#include <QString>
#include <string>

#include "gui/run_data.h"
#include "gui/source_view.h"

namespace tcprof::gui {

// `missing_line` is shown as the highlighted line when no source text is known for it.
void show_source(SourceView* view, const RunData& run, const std::string& file, int line,
                 const QString& missing_line);

}  // namespace tcprof::gui
