// Where the views find the user's source for a file:line: the file itself (as recorded, next to
// the database, next to the model), else the text the model archive carries, else the lines the
// run recorded with its breaks. Breaks and guards share this so both show the same context.
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
