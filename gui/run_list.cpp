#include "gui/run_list.h"

#include <QFileInfo>
#include <QHeaderView>
#include <QRegularExpression>

namespace tcprof::gui {
namespace {
constexpr int kPathRole = Qt::UserRole, kRunRole = Qt::UserRole + 1, kStatusRole = Qt::UserRole + 2;
}

RunList::RunList(QWidget* parent) : QTreeWidget(parent) {
  setHeaderHidden(true);
  setRootIsDecorated(true);
  setUniformRowHeights(true);
  connect(this, &QTreeWidget::currentItemChanged, this, [this](QTreeWidgetItem* current) {
    if (!current) return;
    if (!current->parent() && current->childCount() > 0) return;  // a file: wait for a run
    const qlonglong id = current->data(0, kRunRole).toLongLong();
    if (id > 0) emit runSelected(current->data(0, kPathRole).toString(), id);
  });
}

QString RunList::runText(const RunRow& r) {
  QString model = QFileInfo(QString::fromStdString(r.model_path)).fileName();
  QString text = QString("#%1 %2").arg(r.id).arg(QString::fromStdString(r.command));
  // A multi-rank import is one run per rank: the rank is how the user picks one.
  if (r.world_size > 1) text += QString(" · rank %1/%2").arg(r.rank).arg(r.world_size);
  if (!model.isEmpty()) text += " · " + model;
  if (r.status != "finished") text += QString(" [%1]").arg(QString::fromStdString(r.status));
  return text;
}

QTreeWidgetItem* RunList::fileItem(const QString& path) const {
  for (int i = 0; i < topLevelItemCount(); ++i) {
    if (topLevelItem(i)->data(0, kPathRole).toString() == path) return topLevelItem(i);
  }
  return nullptr;
}

QTreeWidgetItem* RunList::setFile(const QString& path, const std::vector<RunRow>& runs) {
  QTreeWidgetItem* file = fileItem(path);
  if (!file) {
    file = new QTreeWidgetItem(this);
    file->setText(0, QFileInfo(path).fileName());
    file->setToolTip(0, path);
    file->setData(0, kPathRole, path);
    QFont f = file->font(0);
    f.setBold(true);
    file->setFont(0, f);
  }
  QTreeWidgetItem* newest = nullptr;
  for (const RunRow& r : runs) {
    QTreeWidgetItem* item = nullptr;
    for (int i = 0; i < file->childCount(); ++i) {
      if (file->child(i)->data(0, kRunRole).toLongLong() == r.id) item = file->child(i);
    }
    if (!item) {
      item = new QTreeWidgetItem(file);
      item->setData(0, kPathRole, path);
      item->setData(0, kRunRole, static_cast<qlonglong>(r.id));
    }
    item->setText(0, runText(r));
    item->setData(0, kStatusRole, QString::fromStdString(r.status));
    item->setToolTip(0, QString("%1\nstarted %2\nstatus %3")
                            .arg(QString::fromStdString(r.model_path), QString::fromStdString(r.started_at),
                                 QString::fromStdString(r.status)));
    newest = item;
  }
  file->setExpanded(true);
  return newest;
}

void RunList::removeFile(const QString& path) { delete fileItem(path); }

void RunList::setRunStatus(const QString& path, Id run_id, const QString& status) {
  QTreeWidgetItem* file = fileItem(path);
  for (int i = 0; file && i < file->childCount(); ++i) {
    QTreeWidgetItem* item = file->child(i);
    if (item->data(0, kRunRole).toLongLong() != run_id || item->data(0, kStatusRole).toString() == status) continue;
    QString text = item->text(0);
    text.remove(QRegularExpression(" \\[[a-z_]+\\]$"));
    item->setText(0, status == "finished" ? text : QString("%1 [%2]").arg(text, status));
    item->setData(0, kStatusRole, status);
  }
}

bool RunList::selectRun(const QString& path, Id run_id) {
  QTreeWidgetItem* file = fileItem(path);
  for (int i = 0; file && i < file->childCount(); ++i) {
    if (file->child(i)->data(0, kRunRole).toLongLong() == run_id) {
      setCurrentItem(file->child(i));
      return true;
    }
  }
  return false;
}

QStringList RunList::files() const {
  QStringList out;
  for (int i = 0; i < topLevelItemCount(); ++i) out << topLevelItem(i)->data(0, kPathRole).toString();
  return out;
}

QVector<RunKey> RunList::allRuns() const {
  QVector<RunKey> out;
  for (int i = 0; i < topLevelItemCount(); ++i) {
    QTreeWidgetItem* file = topLevelItem(i);
    for (int j = 0; j < file->childCount(); ++j) {
      QTreeWidgetItem* run = file->child(j);
      out.push_back({run->data(0, kPathRole).toString(), run->data(0, kRunRole).toLongLong(),
                     file->text(0) + " " + run->text(0)});
    }
  }
  return out;
}

RunKey RunList::currentRun() const {
  QTreeWidgetItem* item = currentItem();
  if (!item || !item->parent()) return {};
  return {item->data(0, kPathRole).toString(), item->data(0, kRunRole).toLongLong(), item->text(0)};
}

}  // namespace tcprof::gui
