#include "gui/format.h"

#include <QLocale>
#include <QtGlobal>
#include <cmath>

namespace tcprof::gui {

QString format_ns(double ns) {
  const double a = std::fabs(ns);
  auto fmt3 = [](double v, const char* unit) {
    int decimals = v >= 100 ? 0 : (v >= 10 ? 1 : 2);
    return QString::number(v, 'f', decimals) + QString::fromUtf8(unit);
  };
  if (a < 0.5) return "0";
  if (a < 1e3) return QString::number(ns, 'f', 0) + " ns";
  if (a < 1e6) return fmt3(ns / 1e3, " µs");
  if (a < 1e9) return fmt3(ns / 1e6, " ms");
  return fmt3(ns / 1e9, " s");
}

QString format_count(int64_t n) { return QLocale(QLocale::English).toString(static_cast<qlonglong>(n)); }

QColor color_for_name(const QString& name) {
  // qHash differs between processes (seeded); a fixed FNV-1a keeps colours stable across runs
  // and screenshots.
  uint32_t h = 2166136261u;
  for (QChar c : name) {
    h ^= c.unicode();
    h *= 16777619u;
  }
  return QColor::fromHsv(static_cast<int>(h % 360), 110 + static_cast<int>((h >> 9) % 60),
                         200 + static_cast<int>((h >> 17) % 40));
}

QColor palette_color(int index) {
  static const QColor colors[] = {QColor(0x4e79a7), QColor(0xf28e2b), QColor(0x59a14f),
                                  QColor(0xb07aa1), QColor(0x76b7b2), QColor(0xedc948),
                                  QColor(0xff9da7), QColor(0x9c755f), QColor(0xbab0ac)};
  constexpr int n = sizeof(colors) / sizeof(colors[0]);
  return colors[((index % n) + n) % n];
}

double nice_integer_interval(double span, int max_ticks) {
  double interval = 1;
  for (int i = 0; span / interval > max_ticks; ++i) interval *= (i % 3 == 1) ? 2.5 : 2.0;  // 1 2 5 10 20 50
  return interval;
}

QString html_escape(const QString& text) { return text.toHtmlEscaped(); }

}  // namespace tcprof::gui
