// Shared helpers for the GUI suites: demo databases in a temporary directory.
#pragma once
#include <QTemporaryDir>
#include <QtTest>

#include "gui/run_data.h"
#include "tests/gui/demo_run.h"

namespace tcprof::gui_test {

inline QString make_demo_db(const QTemporaryDir& dir, const QString& name, DemoOptions options = {}) {
  const QString path = dir.filePath(name);
  write_demo_run(path.toStdString(), options);
  return path;
}

// A minimal TorchScript-like archive: one stored zip entry `<name>/code/m.py.debug_pkl` whose
// pickle holds the older inline form (text, file, first line) of one source.
inline QByteArray make_archive(const QString& text, const QString& file, int first_line) {
  QByteArray pickle("\x80\x02(", 3);  // PROTO 2, MARK
  auto unicode = [&](const QString& s) {
    const QByteArray utf8 = s.toUtf8();
    pickle += 'X';
    const quint32 n = static_cast<quint32>(utf8.size());
    pickle += QByteArray(reinterpret_cast<const char*>(&n), 4);  // little-endian hosts only
    pickle += utf8;
  };
  unicode(text);
  unicode(file);
  pickle += 'K';
  pickle += static_cast<char>(first_line);
  pickle += "\x87t.";  // TUPLE3, TUPLE (of the mark), STOP
  auto le16 = [](quint16 v) { return QByteArray(reinterpret_cast<const char*>(&v), 2); };
  auto le32 = [](quint32 v) { return QByteArray(reinterpret_cast<const char*>(&v), 4); };
  const QByteArray name = "model/code/m.py.debug_pkl";
  QByteArray zip;
  zip += le32(0x04034b50) + le16(20) + le16(0) + le16(0) + le16(0) + le16(0) + le32(0) +
         le32(static_cast<quint32>(pickle.size())) + le32(static_cast<quint32>(pickle.size())) +
         le16(static_cast<quint16>(name.size())) + le16(0) + name + pickle;
  const quint32 dir_offset = static_cast<quint32>(zip.size());
  QByteArray dir = le32(0x02014b50) + le16(20) + le16(20) + le16(0) + le16(0) + le16(0) + le16(0) + le32(0) +
                   le32(static_cast<quint32>(pickle.size())) + le32(static_cast<quint32>(pickle.size())) +
                   le16(static_cast<quint16>(name.size())) + le16(0) + le16(0) + le16(0) + le16(0) + le32(0) +
                   le32(0) + name;
  zip += dir;
  zip += le32(0x06054b50) + le16(0) + le16(0) + le16(1) + le16(1) + le32(static_cast<quint32>(dir.size())) +
         le32(dir_offset) + le16(0);
  return zip;
}

// The first (only) run of a demo database, loaded synchronously.
inline gui::RunDataPtr load_demo(const QString& path) { return gui::load_run_data(path, 1); }

}  // namespace tcprof::gui_test
