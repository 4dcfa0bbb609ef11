// printf-style appending to a std::string, for the report's text output (format*.cpp).
// Internal to report/.
#pragma once

#include <cstdarg>
#include <cstdio>
#include <string>

namespace pipebench::report {

/// Appends the formatted text to `out`; a format error appends nothing.
__attribute__((format(printf, 2, 3))) inline void appendf(std::string& out, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  va_list again;
  va_copy(again, args);
  const int n = std::vsnprintf(nullptr, 0, fmt, args);
  va_end(args);
  if (n > 0) {
    const size_t at = out.size();
    out.resize(at + static_cast<size_t>(n) + 1);
    std::vsnprintf(out.data() + at, static_cast<size_t>(n) + 1, fmt, again);
    out.resize(at + static_cast<size_t>(n));
  }
  va_end(again);
}

}  // namespace pipebench::report
