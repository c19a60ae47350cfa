// The user's Python source as a TorchScript archive (model.pt) carries it: every
// code/**/*.debug_pkl holds the original text of each scripted function with its file and first
// line. With it the break and guard views can show real context lines even when the source file
// is not on this machine.
//
// Reads the zip directly (stored and deflated entries) and runs a minimal pickle machine over
// the opcodes TorchScript's debug info uses; anything else is skipped, never fatal.
#pragma once
#include <QString>
#include <map>

namespace tcprof::gui {

class ModelArchive {
 public:
  // False when `path` is not a readable zip archive; an archive without debug info loads empty.
  bool load(const QString& path);
  // Known lines of `file` (line number -> text without newline). Matched by full path, else by
  // file name alone (archives record the path of the machine that saved them).
  std::map<int, QString> lines(const QString& file) const;
  size_t fileCount() const { return files_.size(); }

 private:
  void addSource(const QString& file, int first_line, const QString& text);
  void parseDebugPickle(const QByteArray& pickle);
  std::map<QString, std::map<int, QString>> files_;
};

}  // namespace tcprof::gui
