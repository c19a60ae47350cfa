#include "tests/gates/xml_check.h"

#include <cctype>
#include <vector>

namespace tcprof::testing {
namespace {

bool name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == ':';
}

// Checks text or an attribute value: '<' is not allowed and every '&' starts a known entity.
std::string check_text(const std::string& s, size_t begin, size_t end, bool attribute) {
  for (size_t i = begin; i < end; ++i) {
    if (s[i] == '<') return "'<' inside " + std::string(attribute ? "an attribute" : "text") + " at " + std::to_string(i);
    if (s[i] != '&') continue;
    size_t semi = s.find(';', i);
    if (semi == std::string::npos || semi > end) return "unterminated entity at " + std::to_string(i);
    std::string entity = s.substr(i + 1, semi - i - 1);
    bool known = entity == "amp" || entity == "lt" || entity == "gt" || entity == "quot" || entity == "apos" ||
                 (!entity.empty() && entity[0] == '#');
    if (!known) return "unknown entity &" + entity + "; at " + std::to_string(i);
  }
  return {};
}

}  // namespace

std::string xml_error(const std::string& xml) {
  std::vector<std::string> open;
  bool root_seen = false;
  size_t i = 0;
  if (xml.compare(0, 5, "<?xml") == 0) {
    i = xml.find("?>");
    if (i == std::string::npos) return "unterminated XML declaration";
    i += 2;
  }
  while (i < xml.size()) {
    if (xml[i] != '<') {
      size_t next = xml.find('<', i);
      if (next == std::string::npos) next = xml.size();
      if (open.empty()) {
        for (size_t k = i; k < next; ++k) {
          if (!std::isspace(static_cast<unsigned char>(xml[k]))) return "text outside the root element at " + std::to_string(k);
        }
      } else if (auto e = check_text(xml, i, next, false); !e.empty()) {
        return e;
      }
      i = next;
      continue;
    }
    size_t close = xml.find('>', i);
    if (close == std::string::npos) return "unterminated tag at " + std::to_string(i);
    if (xml[i + 1] == '/') {
      std::string name = xml.substr(i + 2, close - i - 2);
      if (open.empty() || open.back() != name) return "unexpected </" + name + "> at " + std::to_string(i);
      open.pop_back();
      i = close + 1;
      continue;
    }
    size_t p = i + 1;
    size_t name_start = p;
    while (p < close && name_char(xml[p])) ++p;
    std::string name = xml.substr(name_start, p - name_start);
    if (name.empty()) return "tag without a name at " + std::to_string(i);
    // Attributes: name="value" pairs; '>' inside a quoted value is allowed, so walk the quotes.
    for (;;) {
      while (p < xml.size() && std::isspace(static_cast<unsigned char>(xml[p]))) ++p;
      if (p >= xml.size()) return "unterminated tag <" + name + ">";
      if (xml[p] == '>' || xml[p] == '/') break;
      size_t attr_start = p;
      while (p < xml.size() && name_char(xml[p])) ++p;
      if (p == attr_start || p + 1 >= xml.size() || xml[p] != '=' || (xml[p + 1] != '"' && xml[p + 1] != '\'')) {
        return "malformed attribute in <" + name + "> at " + std::to_string(attr_start);
      }
      char quote = xml[p + 1];
      size_t value_end = xml.find(quote, p + 2);
      if (value_end == std::string::npos) return "unterminated attribute value in <" + name + ">";
      if (auto e = check_text(xml, p + 2, value_end, true); !e.empty()) return e;
      p = value_end + 1;
    }
    bool self_closing = xml[p] == '/';
    if (self_closing && (p + 1 >= xml.size() || xml[p + 1] != '>')) return "malformed end of <" + name + ">";
    if (open.empty() && root_seen) return "a second root element <" + name + ">";
    root_seen = true;
    if (!self_closing) open.push_back(name);
    i = xml.find('>', p) + 1;
  }
  if (!open.empty()) return "<" + open.back() + "> is never closed";
  if (!root_seen) return "no root element";
  return {};
}

}  // namespace tcprof::testing
