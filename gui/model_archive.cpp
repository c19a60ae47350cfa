#include "gui/model_archive.h"

#include <QFile>
#include <QFileInfo>
#include <QStringList>
#include <cstring>
#include <memory>
#include <variant>
#include <vector>
#include <zlib.h>

namespace tcprof::gui {
namespace {

uint16_t u16(const char* p) { return static_cast<uint16_t>(uint8_t(p[0]) | (uint8_t(p[1]) << 8)); }
uint32_t u32(const char* p) { return uint32_t(u16(p)) | (uint32_t(u16(p + 2)) << 16); }

// Raw deflate (zip method 8) into a buffer of the size the directory promised.
bool inflate_raw(const QByteArray& in, qint64 size, QByteArray& out) {
  if (size < 0 || size > (256 << 20)) return false;  // debug info is small; refuse absurd sizes
  out.resize(static_cast<qsizetype>(size));
  z_stream z;
  std::memset(&z, 0, sizeof z);
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK) return false;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = inflate(&z, Z_FINISH);
  inflateEnd(&z);
  return rc == Z_STREAM_END;
}

// A pickle value: only what debug info contains.
struct Value;
using ValuePtr = std::shared_ptr<Value>;
struct Value {
  enum Kind { Int, Str, Seq, Global, Mark, None } kind = None;
  int64_t i = 0;
  QString s;                 // Str, or Global "module name"
  std::vector<ValuePtr> items;  // Seq (tuples and lists alike)
};

ValuePtr make_int(int64_t v) {
  auto p = std::make_shared<Value>();
  p->kind = Value::Int;
  p->i = v;
  return p;
}

}  // namespace

bool ModelArchive::load(const QString& path) {
  files_.clear();
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly) || f.size() < 22) return false;
  // End of central directory: within the last 64 KiB (+ its 22 bytes).
  const qint64 tail_size = std::min<qint64>(f.size(), 65536 + 22);
  f.seek(f.size() - tail_size);
  const QByteArray tail = f.read(tail_size);
  qsizetype eocd = -1;
  for (qsizetype i = tail.size() - 22; i >= 0; --i) {
    if (u32(tail.constData() + i) == 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) return false;
  const uint32_t dir_size = u32(tail.constData() + eocd + 12);
  const uint32_t dir_offset = u32(tail.constData() + eocd + 16);
  if (dir_offset == 0xffffffffu || !f.seek(dir_offset)) return false;  // zip64: not for debug info
  const QByteArray dir = f.read(dir_size);
  for (qsizetype p = 0; p + 46 <= dir.size() && u32(dir.constData() + p) == 0x02014b50;) {
    const char* e = dir.constData() + p;
    const uint16_t method = u16(e + 10);
    const uint32_t packed = u32(e + 20), size = u32(e + 24);
    const uint16_t name_len = u16(e + 28), extra_len = u16(e + 30), comment_len = u16(e + 32);
    const uint32_t local = u32(e + 42);
    const QString name = QString::fromUtf8(e + 46, name_len);
    p += 46 + name_len + extra_len + comment_len;
    if (!name.endsWith(".debug_pkl") || (method != 0 && method != 8)) continue;
    char header[30];
    if (!f.seek(local) || f.read(header, 30) != 30 || u32(header) != 0x04034b50) continue;
    if (!f.seek(local + 30 + u16(header + 26) + u16(header + 28))) continue;
    const QByteArray raw = f.read(packed);
    QByteArray data;
    if (method == 0) data = raw;
    else if (!inflate_raw(raw, size, data)) continue;
    parseDebugPickle(data);
  }
  return true;
}

void ModelArchive::parseDebugPickle(const QByteArray& pickle) {
  std::vector<ValuePtr> stack;
  std::vector<size_t> marks;
  std::vector<ValuePtr> memo;
  const char* p = pickle.constData();
  const char* end = p + pickle.size();
  auto need = [&](qsizetype n) { return end - p >= n; };
  auto put = [&](size_t index) {
    if (stack.empty()) return;
    if (memo.size() <= index) memo.resize(index + 1);
    memo[index] = stack.back();
  };
  auto get = [&](size_t index) { stack.push_back(index < memo.size() && memo[index] ? memo[index] : std::make_shared<Value>()); };
  auto pop_to_mark = [&]() {
    std::vector<ValuePtr> items;
    if (marks.empty()) return items;
    const size_t m = marks.back();
    marks.pop_back();
    if (m > stack.size()) return items;
    items.assign(stack.begin() + static_cast<ptrdiff_t>(m), stack.end());
    stack.resize(m);
    return items;
  };
  auto seq = [&](std::vector<ValuePtr> items) {
    auto v = std::make_shared<Value>();
    v->kind = Value::Seq;
    v->items = std::move(items);
    stack.push_back(v);
  };
  auto tuple_n = [&](size_t n) {
    if (stack.size() < n) return false;
    std::vector<ValuePtr> items(stack.end() - static_cast<ptrdiff_t>(n), stack.end());
    stack.resize(stack.size() - n);
    seq(std::move(items));
    return true;
  };
  while (p < end) {
    const uint8_t op = static_cast<uint8_t>(*p++);
    switch (op) {
      case 0x80: if (!need(1)) return; ++p; break;                       // PROTO
      case 'X': {                                                        // BINUNICODE
        if (!need(4)) return;
        const uint32_t n = u32(p);
        p += 4;
        if (!need(n)) return;
        auto v = std::make_shared<Value>();
        v->kind = Value::Str;
        v->s = QString::fromUtf8(p, static_cast<qsizetype>(n));
        p += n;
        stack.push_back(v);
        break;
      }
      case 'K': if (!need(1)) return; stack.push_back(make_int(uint8_t(*p))); p += 1; break;  // BININT1
      case 'M': if (!need(2)) return; stack.push_back(make_int(u16(p))); p += 2; break;       // BININT2
      case 'J': if (!need(4)) return; stack.push_back(make_int(int32_t(u32(p)))); p += 4; break;  // BININT
      case 'q': if (!need(1)) return; put(uint8_t(*p)); p += 1; break;   // BINPUT
      case 'r': if (!need(4)) return; put(u32(p)); p += 4; break;        // LONG_BINPUT
      case 'h': if (!need(1)) return; get(uint8_t(*p)); p += 1; break;   // BINGET
      case 'j': if (!need(4)) return; get(u32(p)); p += 4; break;        // LONG_BINGET
      case '(': marks.push_back(stack.size()); break;                    // MARK
      case 't': seq(pop_to_mark()); break;                               // TUPLE
      case ')': seq({}); break;                                          // EMPTY_TUPLE
      case ']': seq({}); break;                                          // EMPTY_LIST
      case 0x85: if (!tuple_n(1)) return; break;                         // TUPLE1
      case 0x86: if (!tuple_n(2)) return; break;                         // TUPLE2
      case 0x87: if (!tuple_n(3)) return; break;                         // TUPLE3
      case 'N': stack.push_back(std::make_shared<Value>()); break;       // NONE
      case 0x88: case 0x89: stack.push_back(make_int(op == 0x88)); break;  // NEWTRUE / NEWFALSE
      case 'e': {                                                        // APPENDS
        std::vector<ValuePtr> items = pop_to_mark();
        if (stack.empty()) return;
        auto& list = stack.back()->items;
        list.insert(list.end(), items.begin(), items.end());
        break;
      }
      case 'a': {                                                        // APPEND
        if (stack.size() < 2) return;
        ValuePtr item = stack.back();
        stack.pop_back();
        stack.back()->items.push_back(item);
        break;
      }
      case 'c': {                                                        // GLOBAL "module\nname\n"
        const char* nl1 = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
        if (!nl1) return;
        const char* nl2 = static_cast<const char*>(std::memchr(nl1 + 1, '\n', static_cast<size_t>(end - nl1 - 1)));
        if (!nl2) return;
        auto v = std::make_shared<Value>();
        v->kind = Value::Global;
        v->s = QString::fromUtf8(nl1 + 1, nl2 - nl1 - 1);
        p = nl2 + 1;
        stack.push_back(v);
        break;
      }
      case 'R': {                                                        // REDUCE: build_intlist(args)
        if (stack.size() < 2) return;
        ValuePtr args = stack.back();
        stack.pop_back();
        ValuePtr fn = stack.back();
        stack.pop_back();
        // build_intlist([...]) and friends return their list argument.
        stack.push_back(!args->items.empty() ? args->items.front() : std::make_shared<Value>());
        (void)fn;
        break;
      }
      case '.': p = end; break;                                          // STOP
      default: return;  // an opcode debug info does not use: stop, keep what was found
    }
  }
  if (stack.empty()) return;
  // Walk the result. Newer archives: ("FORMAT_WITH_STRING_TABLE", (strings...), records...)
  // where a source is (list of string indices forming the text, file index, first line).
  // Older ones put (text, file, first line) inline.
  std::vector<QString> table;
  std::vector<ValuePtr> todo = {stack.back()};
  for (const ValuePtr& v : stack) {
    if (v->kind != Value::Seq) continue;
    for (size_t i = 0; i + 1 < v->items.size(); ++i) {
      if (v->items[i]->kind == Value::Str && v->items[i]->s == "FORMAT_WITH_STRING_TABLE" &&
          v->items[i + 1]->kind == Value::Seq) {
        for (const ValuePtr& s : v->items[i + 1]->items) table.push_back(s->kind == Value::Str ? s->s : QString());
      }
    }
  }
  size_t visited = 0;
  while (!todo.empty() && ++visited < 2'000'000) {
    ValuePtr v = todo.back();
    todo.pop_back();
    if (v->kind != Value::Seq) continue;
    const auto& it = v->items;
    if (it.size() == 3 && it[2]->kind == Value::Int) {
      if (it[0]->kind == Value::Seq && it[1]->kind == Value::Int && !table.empty()) {
        QString text;
        bool ok = static_cast<size_t>(it[1]->i) < table.size();
        for (const ValuePtr& index : it[0]->items) {
          ok = ok && index->kind == Value::Int && static_cast<size_t>(index->i) < table.size();
          if (ok) text += table[static_cast<size_t>(index->i)];
        }
        if (ok && !it[0]->items.empty()) addSource(table[static_cast<size_t>(it[1]->i)], static_cast<int>(it[2]->i), text);
      } else if (it[0]->kind == Value::Str && it[1]->kind == Value::Str) {
        addSource(it[1]->s, static_cast<int>(it[2]->i), it[0]->s);
      }
    }
    for (const ValuePtr& child : it) todo.push_back(child);
  }
}

void ModelArchive::addSource(const QString& file, int first_line, const QString& text) {
  if (file.isEmpty() || first_line <= 0 || !text.contains('\n')) return;
  auto& lines = files_[file];
  const QStringList split = text.split('\n');
  for (int i = 0; i < split.size(); ++i) {
    if (i == split.size() - 1 && split[i].isEmpty()) break;  // text ends with a newline
    lines.emplace(first_line + i, split[i]);
  }
}

std::map<int, QString> ModelArchive::lines(const QString& file) const {
  if (auto it = files_.find(file); it != files_.end()) return it->second;
  const QString name = QFileInfo(file).fileName();
  for (const auto& [path, lines] : files_) {
    if (QFileInfo(path).fileName() == name) return lines;
  }
  return {};
}

}  // namespace tcprof::gui
