// Zoomable, pannable timeline of a run: calls (coloured by the cache entry that served them),
// compiles, graphs, then one row per CPU thread / GPU stream of kernels. Paint cost depends on
// the pixels, not the kernel count: only visible kernels are visited, and where kernels are
// narrower than a pixel the row jumps (binary search) to the next pixel and draws one column.
//
// Mouse: wheel zooms at the cursor, drag pans, Shift+drag selects a time range, click selects a
// kernel, double-click zooms to it. Keys: +/- zoom, ←/→ pan, 0 or Home shows all, Esc clears.
#pragma once
#include <QWidget>
#include <optional>

#include "gui/run_data.h"

namespace tcprof::gui {

class KernelTimeline : public QWidget {
  Q_OBJECT
 public:
  struct KernelRef {
    int lane = -1;
    size_t index = 0;
    bool valid() const { return lane >= 0; }
  };

  explicit KernelTimeline(QWidget* parent = nullptr);
  void setRun(const RunDataPtr& run, bool keep_view = false);

  void setView(double start_ns, double end_ns);
  void resetView();
  double viewStart() const { return view_start_; }
  double viewEnd() const { return view_end_; }
  TimeRange selectedRange() const { return range_; }
  void setSelectedRange(TimeRange range);
  KernelRef selectedKernel() const { return selected_; }
  // Selects the longest instance of kernel `name` and scrolls it into view (table → timeline).
  void revealName(int name);
  void selectKernel(KernelRef ref);
  // Next (+1) or previous (-1) instance of the selected kernel's name, in start order across
  // lanes; keys N and P.
  void stepInstance(int direction);
  int highlightedName() const { return highlight_name_; }
  KernelRef kernelAt(QPoint pos) const;
  // Where `ref` is drawn (centre of its bar), for tests and keyboard navigation.
  QPointF centerOf(KernelRef ref) const;
  // Number of rectangles the last paint drew (aggregated columns count once): for tests and
  // the benchmark, to show painting is bounded by pixels.
  int lastPaintItems() const { return last_paint_items_; }

  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 signals:
  void kernelSelected(int name);          // timeline → table
  void rangeSelected(tcprof::TimeRange);  // empty range = cleared
  void selectionChanged();                // selectedKernel() changed (any cause)

 protected:
  void paintEvent(QPaintEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  bool event(QEvent* event) override;

 private:
  enum class Drag { None, Pan, Range };
  static constexpr int kLabelWidth = 132, kRulerHeight = 24, kRowHeight = 24;
  int rowCount() const;
  int rowTop(int row) const { return kRulerHeight + row * kRowHeight; }
  double xOf(double t) const;
  double timeAt(double x) const;
  void zoomAt(double x, double factor);
  void clampView();

  RunDataPtr run_;
  double view_start_ = 0, view_end_ = 1;
  double origin_ = 0;  // run start: the ruler shows time since it
  TimeRange range_;
  KernelRef selected_;
  int highlight_name_ = -1;
  int64_t max_call_ns_ = 0, max_compile_ns_ = 0, max_span_ns_ = 0;
  Drag drag_ = Drag::None;
  QPoint press_pos_;
  double press_view_start_ = 0, press_time_ = 0;
  bool moved_ = false;
  int last_paint_items_ = 0;
};

}  // namespace tcprof::gui
