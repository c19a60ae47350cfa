// A small XML well-formedness checker for the JUnit output: one root element, properly nested
// and closed tags, quoted attributes, known entities. Enough to catch what breaks CI parsers.
#pragma once
#include <string>

namespace tcprof::testing {

// Empty when `xml` is well formed, else what is wrong and where.
std::string xml_error(const std::string& xml);

}  // namespace tcprof::testing
