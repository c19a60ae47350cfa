#include "gui/main_window.h"

#include <QApplication>
#include <QCloseEvent>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QDateTime>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QSettings>
#include <QStatusBar>
#include <QThread>

#include "gui/breaks_view.h"
#include "gui/compare_view.h"
#include "gui/graphs_view.h"
#include "gui/kernels_view.h"
#include "gui/overview_view.h"
#include "gui/ranks_view.h"
#include "gui/recompiles_view.h"
#include "gui/compile_time_view.h"
#include "gui/training_view.h"

namespace tcprof::gui {

MainWindow::MainWindow(bool interactive, QWidget* parent)
    : QMainWindow(parent),
      interactive_(interactive),
      loader_(new DbLoader(this)),
      run_list_(new RunList),
      tabs_(new QTabWidget),
      overview_(new OverviewView),
      breaks_(new BreaksView),
      recompiles_(new RecompilesView),
      compile_time_(new CompileTimeView),
      kernels_(new KernelsView),
      graphs_(new GraphsView),
      training_(new TrainingView),
      compare_(new CompareView),
      ranks_(new RanksView),
      rank_bar_(new QWidget),
      rank_box_(new QComboBox),
      progress_(new QProgressBar),
      status_(new QLabel),
      live_timer_(new QTimer(this)) {
  setWindowTitle("tcprof");
  setAcceptDrops(true);
  views_ = {overview_, breaks_, recompiles_, compile_time_, kernels_, graphs_, training_, compare_, ranks_};
  const QStringList titles = {"&Overview", "Graph &breaks", "&Recompiles", "Com&pile time", "&Kernels",
                              "&Graphs",   "&Training",     "&Compare",    "Ra&nks"};
  for (size_t i = 0; i < views_.size(); ++i) tabs_->addTab(views_[i], titles[static_cast<int>(i)]);
  tabs_->setDocumentMode(true);
  auto* rank_layout = new QHBoxLayout(rank_bar_);
  rank_layout->setContentsMargins(4, 0, 4, 0);
  rank_layout->addWidget(new QLabel("Rank:"));
  rank_layout->addWidget(rank_box_);
  rank_box_->setToolTip("This run is one rank of a distributed job: pick the rank every view shows (Ranks view: how they differ)");
  rank_box_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  tabs_->setCornerWidget(rank_bar_, Qt::TopRightCorner);
  rank_bar_->setVisible(false);
  connect(rank_box_, &QComboBox::activated, this, [this](int index) {
    const Id id = rank_box_->itemData(index).toLongLong();
    if (current_ && id > 0 && id != current_->run.id) selectRun(current_->path, id);
  });
  connect(ranks_, &RanksView::rankChosen, this, [this](Id id) {
    if (current_) selectRun(current_->path, id);
  });
  setCentralWidget(tabs_);

  auto* dock = new QDockWidget("Runs", this);
  dock->setObjectName("runs");
  dock->setWidget(run_list_);
  dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
  addDockWidget(Qt::LeftDockWidgetArea, dock);
  resizeDocks({dock}, {200}, Qt::Horizontal);  // file names are short; the views need the width

  progress_->setMaximumWidth(220);
  progress_->setRange(0, 100);
  progress_->setVisible(false);
  statusBar()->addWidget(status_, 1);
  statusBar()->addPermanentWidget(progress_);
  status_->setText("Open a tcprof database: File › Open (Ctrl+O), drag one here, or `tcprof-gui run.db`.");
  overview_->setRun(nullptr);

  connect(overview_, &OverviewView::openView, this, [this](const QString& v) { showView(v); });
  connect(run_list_, &RunList::runSelected, this, &MainWindow::selectRun);
  connect(loader_, &DbLoader::fileOpened, this,
          [this](int request, const QString& path, const std::vector<RunRow>& runs) {
            open_requests_.remove(request);
            QTreeWidgetItem* newest = run_list_->setFile(path, runs);
            compare_->setAvailableRuns(run_list_->allRuns());
            if (!imported_from_.contains(path)) addRecent(path);
            // The first file opened shows its newest run; later files wait to be picked.
            if (path == first_file_ || first_file_.isEmpty()) {
              first_file_.clear();
              if (!current_ && !run_wanted_ && newest) run_list_->setCurrentItem(newest);
            }
          });
  // A TORCH_TRACE imported for the window: its placeholder in the list becomes the database.
  connect(loader_, &DbLoader::imported, this,
          [this](int request, const QString& trace, const QString& db, const QStringList& warnings) {
            run_list_->removeFile(trace);
            run_list_->setFile(db, {});
            imported_from_[db] = trace;
            if (first_file_ == trace) first_file_ = db;
            addRecent(trace);
            status_->setText(QString("Imported %1 (a temporary database; `tcprof import` keeps one)%2")
                                 .arg(trace, warnings.isEmpty() ? QString() : ": " + warnings.join("; ")));
            Q_UNUSED(request);
          });
  connect(loader_, &DbLoader::runLoaded, this, [this](int request, RunDataPtr run) {
    if (request == run_request_) applyRun(std::move(run));
  });
  connect(loader_, &DbLoader::failed, this, &MainWindow::onFailed);
  connect(loader_, &DbLoader::progress, this, [this](int request, const QString& text, double fraction) {
    // Live refreshes happen every second: they update quietly, without progress noise. An open
    // that imports a TORCH_TRACE reports its progress too.
    if ((request != run_request_ && !open_requests_.contains(request)) || request == live_request_) return;
    status_->setText(text + "…");
    progress_->setValue(static_cast<int>(fraction * 100));
  });
  connect(loader_, &DbLoader::busyChanged, this, [this](bool busy) {
    progress_->setVisible(busy && !quiet_load_);
    if (busy) progress_->setValue(0);
  });
  live_timer_->setInterval(1000);
  connect(live_timer_, &QTimer::timeout, this, &MainWindow::liveTick);
  live_timer_->start();

  buildMenus();
  resize(1400, 900);
  if (interactive_) {
    QSettings settings;
    restoreGeometry(settings.value("window/geometry").toByteArray());
    restoreState(settings.value("window/state").toByteArray());
    tabs_->setCurrentIndex(settings.value("window/tab", 0).toInt());
  }
}

MainWindow::~MainWindow() = default;

QStringList MainWindow::viewNames() {
  return {"overview", "breaks", "recompiles", "compile", "kernels", "graphs", "training", "compare", "ranks"};
}

bool MainWindow::showView(const QString& name) {
  const int index = static_cast<int>(viewNames().indexOf(name));
  if (index < 0) return false;
  tabs_->setCurrentIndex(index);
  return true;
}

QString MainWindow::currentViewName() const { return viewNames().value(tabs_->currentIndex()); }

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu("&File");
  file->addAction("&Open…", QKeySequence::Open, this, &MainWindow::chooseFiles);
  file->addAction("Open TORCH_TRACE &Folder…", this, [this] {
    QSettings settings;
    const QString dir = QFileDialog::getExistingDirectory(this, "Open a TORCH_TRACE folder (one log per rank)",
                                                          settings.value("dialog/dir").toString());
    if (dir.isEmpty()) return;
    settings.setValue("dialog/dir", dir);
    openFiles({dir});
  });
  recent_menu_ = file->addMenu("Open &Recent");
  file->addAction("&Close File", QKeySequence::Close, this, [this] {
    const RunKey key = run_list_->currentRun();
    if (key.path.isEmpty()) return;
    run_list_->removeFile(key.path);
    compare_->setAvailableRuns(run_list_->allRuns());
    if (current_ && current_->path == key.path) applyRun(nullptr);
  });
  file->addAction("Re&load", QKeySequence::Refresh, this, [this] {
    if (current_) selectRun(current_->path, current_->run.id);
  });
  file->addSeparator();
  file->addAction("&Quit", QKeySequence::Quit, this, &QWidget::close);
  rebuildRecentMenu();

  QMenu* view = menuBar()->addMenu("&View");
  const QStringList titles = {"Overview", "Graph breaks", "Recompiles", "Compile time", "Kernels",
                              "Graphs",   "Training",     "Compare",    "Ranks"};
  for (int i = 0; i < titles.size(); ++i) {
    view->addAction(titles[i], QKeySequence(Qt::CTRL | (Qt::Key_1 + i)), this, [this, i] { tabs_->setCurrentIndex(i); });
  }
  view->addSeparator();
  view->addAction("Focus run list", QKeySequence(Qt::CTRL | Qt::Key_L), this, [this] { run_list_->setFocus(); });

  QMenu* help = menuBar()->addMenu("&Help");
  help->addAction("&Keyboard shortcuts", QKeySequence::HelpContents, this, [this] {
    QMessageBox::information(this, "Keyboard shortcuts",
                             "Ctrl+O open · Ctrl+W close file · F5 reload · Ctrl+1…9 views · "
                             "Ctrl+L run list\nTables: arrows move, type to search\nKernel timeline: "
                             "+/− zoom, ←/→ pan, 0 show all, Esc clear range, Shift+drag select range");
  });
}

void MainWindow::openFiles(const QStringList& paths) {
  for (const QString& p : paths) {
    const QString path = QFileInfo(p).absoluteFilePath();
    // The list keeps the order the user gave; the first file opened into an empty window is
    // the one shown, whichever finishes loading first.
    run_list_->setFile(path, {});
    if (!current_ && !run_wanted_ && first_file_.isEmpty()) first_file_ = path;
    status_->setText(QString("Opening %1…").arg(path));
    quiet_load_ = false;
    open_requests_.insert(loader_->openFile(path));
  }
}

void MainWindow::chooseFiles() {
  QSettings settings;
  const QStringList files = QFileDialog::getOpenFileNames(
      this, "Open tcprof databases or TORCH_TRACE logs", settings.value("dialog/dir").toString(),
      "tcprof databases (*.db *.sqlite *.sqlite3);;TORCH_TRACE logs (*.log *.log.gz);;All files (*)");
  if (files.isEmpty()) return;
  settings.setValue("dialog/dir", QFileInfo(files.front()).absolutePath());
  openFiles(files);
}

void MainWindow::selectRun(const QString& path, Id run_id) {
  run_wanted_ = true;
  quiet_load_ = false;
  run_request_ = loader_->loadRun(path, run_id);
}

void MainWindow::applyRun(RunDataPtr run) {
  run_wanted_ = false;
  const bool same = current_ && run && current_->path == run->path && current_->run.id == run->run.id;
  current_ = std::move(run);
  for (RunView* v : views_) v->setRun(current_);
  updateRankSelector();
  if (current_) {
    setWindowTitle(QString("%1 — tcprof").arg(current_->title()));
    run_list_->setRunStatus(current_->path, current_->run.id, QString::fromStdString(current_->run.status));
    const bool live = current_->run.status == "running";
    status_->setText(QString("%1%2 · %3 kernels").arg(current_->path, live ? " · live" : "")
                         .arg(current_->summary.counts.kernels));
    if (!same) run_list_->selectRun(current_->path, current_->run.id);
  } else {
    setWindowTitle("tcprof");
  }
  emit runShown(current_);
}

void MainWindow::updateRankSelector() {
  const bool ranked = current_ && current_->ranks.ranks.size() > 1;
  rank_bar_->setVisible(ranked);
  QSignalBlocker block(rank_box_);
  rank_box_->clear();
  if (!ranked) return;
  for (const analysis::RankRun& r : current_->ranks.ranks) {
    rank_box_->addItem(QString("%1 of %2 (run #%3)").arg(r.rank).arg(current_->run.world_size).arg(r.run_id),
                       static_cast<qlonglong>(r.run_id));
    if (r.run_id == current_->run.id) rank_box_->setCurrentIndex(rank_box_->count() - 1);
  }
}

void MainWindow::onFailed(int request, const QString& path, const QString& message) {
  if (open_requests_.remove(request)) {
    run_list_->removeFile(path);
    if (path == first_file_) {
      // The file to show failed: show the next file in the list that has already been listed.
      first_file_.clear();
      const QVector<RunKey> runs = run_list_->allRuns();
      if (!current_ && !run_wanted_ && !runs.isEmpty()) {
        RunKey newest = runs.front();
        for (const RunKey& k : runs) {
          if (k.path == newest.path) newest = k;
        }
        run_list_->selectRun(newest.path, newest.run_id);
      }
    }
  }
  if (request == run_request_) run_wanted_ = false;
  status_->setText(message);
  emit loadFailed(path, message);
  if (!interactive_) return;
  QMessageBox box(QMessageBox::Warning, "Cannot open database",
                  QString("<b>%1</b> cannot be shown.").arg(QFileInfo(path).fileName().toHtmlEscaped()),
                  QMessageBox::Ok, this);
  box.setInformativeText(message);
  if (message.contains("newer")) {
    box.setDetailedText("The file was written by a newer tcprof whose database this version does not "
                        "understand. Install the newer tcprof-gui to read it; nothing was changed in the file.");
  } else if (message.contains("not a tcprof database") || message.contains("not an SQLite")) {
    box.setDetailedText("tcprof-gui opens the SQLite files that `tcprof run`, `tcprof train` and "
                        "`tcprof explain --db` write (by default under ./tcprof-runs/).");
  }
  box.exec();
}

void MainWindow::liveTick() {
  // Only a run that is still being written changes; read it again off the UI thread, and only
  // when the previous read has finished, so a slow disk never piles up requests.
  if (!current_ || current_->run.status != "running" || loader_->pending() > 0) return;
  // A job that was killed stays "running" forever: read again only when the file or its WAL
  // changed since the last read, so an idle file costs two stat() calls a second.
  const QFileInfo db(current_->path), wal(current_->path + "-wal");
  const QString signature = QString("%1 %2 %3 %4")
                                .arg(db.size())
                                .arg(db.lastModified().toMSecsSinceEpoch())
                                .arg(wal.exists() ? wal.size() : -1)
                                .arg(wal.exists() ? wal.lastModified().toMSecsSinceEpoch() : 0);
  if (signature == live_signature_) return;
  live_signature_ = signature;
  ++live_refreshes_;
  quiet_load_ = true;  // set before loadRun: it reports busy at once
  run_request_ = live_request_ = loader_->loadRun(current_->path, current_->run.id);
}

void MainWindow::addRecent(const QString& path) {
  if (!interactive_) return;
  QSettings settings;
  QStringList recent = settings.value("recent").toStringList();
  recent.removeAll(path);
  recent.prepend(path);
  while (recent.size() > 10) recent.removeLast();
  settings.setValue("recent", recent);
  rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
  recent_menu_->clear();
  const QStringList recent = interactive_ ? QSettings().value("recent").toStringList() : QStringList();
  for (const QString& path : recent) {
    recent_menu_->addAction(path, this, [this, path] { openFiles({path}); });
  }
  recent_menu_->setEnabled(!recent.isEmpty());
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (event->mimeData()->hasUrls()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  QStringList files;
  for (const QUrl& url : event->mimeData()->urls()) {
    if (url.isLocalFile()) files << url.toLocalFile();
  }
  openFiles(files);
  event->acceptProposedAction();
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (interactive_) {
    QSettings settings;
    settings.setValue("window/geometry", saveGeometry());
    settings.setValue("window/state", saveState());
    settings.setValue("window/tab", tabs_->currentIndex());
  }
  QMainWindow::closeEvent(event);
}

bool MainWindow::waitUntilIdle(int timeout_ms) {
  QElapsedTimer timer;
  timer.start();
  while (timer.elapsed() < timeout_ms) {
    QApplication::processEvents(QEventLoop::AllEvents, 20);
    const bool busy = loader_->pending() > 0 || !open_requests_.isEmpty() || run_wanted_ || compare_->isLoading();
    if (!busy) {
      QApplication::processEvents();
      return true;
    }
    QThread::msleep(2);
  }
  return false;
}

}  // namespace tcprof::gui
