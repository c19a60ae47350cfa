// Small text helpers shared by the views: durations, counts and colours that must look the same
// in every table and chart.
#pragma once
#include <QColor>
#include <QString>
#include <cstdint>
#include <string>

namespace tcprof::gui {

// "1.23 ms", "850 ns", "2.5 s": three significant digits, unit picked by magnitude.
QString format_ns(double ns);
// "1,234,567" with thin group separators for counts.
QString format_count(int64_t n);
// A stable, readable colour for a name (kernel names, compile entries): same name, same colour.
QColor color_for_name(const QString& name);
// The i-th colour of a qualitative palette (cache entries in the recompiles timeline).
QColor palette_color(int index);
// Tick spacing of 1, 2 or 5 × 10^k (at least 1) giving at most `max_ticks` ticks over `span`:
// chart axes over call and step numbers then read 0, 5, 10 … instead of 0, 9, 19 ….
double nice_integer_interval(double span, int max_ticks = 10);
// UTF-8 std::string from the store as a QString (the views' one conversion).
inline QString q(const std::string& s) { return QString::fromStdString(s); }
// Escapes text for use inside rich-text labels.
QString html_escape(const QString& text);

}  // namespace tcprof::gui
