// The main window: run list on the left, one tab per view, loading in the background with a
// progress indicator in the status bar, live refresh of runs still being written.
#pragma once
#include <QComboBox>
#include <QHash>
#include <QLabel>
#include <QMainWindow>
#include <QProgressBar>
#include <QSet>
#include <QTabWidget>
#include <QTimer>

#include "gui/db_loader.h"
#include "gui/run_list.h"

namespace tcprof::gui {

class OverviewView;
class BreaksView;
class RecompilesView;
class KernelsView;
class GraphsView;
class CompileTimeView;
class TrainingView;
class CompareView;
class RanksView;
class RunView;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  // `interactive` = false (screenshots, tests): errors go to the loadFailed signal only, no
  // dialogs, and no settings are read or written.
  explicit MainWindow(bool interactive = true, QWidget* parent = nullptr);
  ~MainWindow() override;

  // Databases, or TORCH_TRACE logs and folders (imported into a temporary database first).
  void openFiles(const QStringList& paths);
  // View names: overview breaks recompiles kernels graphs training compare ranks.
  static QStringList viewNames();
  bool showView(const QString& name);
  QString currentViewName() const;
  // Spins the event loop until nothing is loading (and a run is shown if one was opened);
  // false on timeout.
  bool waitUntilIdle(int timeout_ms);
  RunDataPtr currentRun() const { return current_; }
  void setLiveInterval(int ms) { live_timer_->setInterval(ms); }
  int liveRefreshes() const { return live_refreshes_; }

  RunList* runList() const { return run_list_; }
  DbLoader* loader() const { return loader_; }
  OverviewView* overview() const { return overview_; }
  BreaksView* breaks() const { return breaks_; }
  RecompilesView* recompiles() const { return recompiles_; }
  KernelsView* kernels() const { return kernels_; }
  GraphsView* graphs() const { return graphs_; }
  CompileTimeView* compileTime() const { return compile_time_; }
  TrainingView* training() const { return training_; }
  CompareView* compare() const { return compare_; }
  RanksView* ranks() const { return ranks_; }
  // Above the tabs, shown only for a run of a multi-rank import: picks the rank whose run every
  // view shows, keeping the current view.
  QComboBox* rankSelector() const { return rank_box_; }

 signals:
  void loadFailed(const QString& path, const QString& message);
  void runShown(tcprof::gui::RunDataPtr run);

 protected:
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;
  void closeEvent(QCloseEvent* event) override;

 private:
  void buildMenus();
  void selectRun(const QString& path, Id run_id);
  void applyRun(RunDataPtr run);
  void updateRankSelector();
  void onFailed(int request, const QString& path, const QString& message);
  void addRecent(const QString& path);
  void rebuildRecentMenu();
  void liveTick();
  void chooseFiles();

  bool interactive_;
  DbLoader* loader_;
  RunList* run_list_;
  QTabWidget* tabs_;
  OverviewView* overview_;
  BreaksView* breaks_;
  RecompilesView* recompiles_;
  KernelsView* kernels_;
  GraphsView* graphs_;
  CompileTimeView* compile_time_;
  TrainingView* training_;
  CompareView* compare_;
  RanksView* ranks_;
  QWidget* rank_bar_;
  QComboBox* rank_box_;
  std::vector<RunView*> views_;
  QProgressBar* progress_;
  QLabel* status_;
  QMenu* recent_menu_ = nullptr;
  QTimer* live_timer_;
  RunDataPtr current_;
  int run_request_ = 0;      // the load whose answer we are waiting for
  int live_request_ = -1;    // the latest live refresh (shown without progress)
  bool quiet_load_ = false;  // the load being started is a live refresh
  QSet<int> open_requests_;  // files being listed
  bool run_wanted_ = false;  // a run was selected and has not been shown yet
  QString first_file_;       // file whose newest run is shown when it has been listed
  int live_refreshes_ = 0;
  QString live_signature_;  // size and mtime of the file and its WAL at the last live read
  QHash<QString, QString> imported_from_;  // temporary database -> the TORCH_TRACE it holds
};

}  // namespace tcprof::gui
