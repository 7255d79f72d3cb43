#include "ascprof/common/numbers.hpp"

#include <charconv>
#include <cmath>
#include <limits>
#include <string>

namespace ascprof {

std::string_view trim(std::string_view s) {
  auto is_ws = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && is_ws(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_ws(s.back())) s.remove_suffix(1);
  return s;
}

namespace {
bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}
}  // namespace

bool is_null_cell(std::string_view s) {
  s = trim(s);
  return s.empty() || iequals(s, "n/a") || iequals(s, "nan") || iequals(s, "none") || iequals(s, "null");
}

std::optional<int64_t> parse_us_to_ns(std::string_view s) {
  s = trim(s);
  if (is_null_cell(s)) return std::nullopt;
  bool neg = false;
  size_t i = 0;
  if (s[0] == '-' || s[0] == '+') {
    neg = s[0] == '-';
    ++i;
  }
  // Fast exact path: digits [. digits]
  uint64_t whole = 0;
  size_t int_digits = 0;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i, ++int_digits) {
    if (whole > (std::numeric_limits<uint64_t>::max() - 9) / 10) return std::nullopt;
    whole = whole * 10 + static_cast<uint64_t>(s[i] - '0');
  }
  uint64_t frac = 0;  // nanoseconds part
  size_t frac_digits = 0;
  bool round_up = false;
  if (i < s.size() && s[i] == '.') {
    ++i;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i, ++frac_digits) {
      if (frac_digits < 3) {
        frac = frac * 10 + static_cast<uint64_t>(s[i] - '0');
      } else if (frac_digits == 3) {
        round_up = s[i] >= '5';
      }
    }
  }
  if (i == s.size()) {
    if (int_digits == 0 && frac_digits == 0) return std::nullopt;
    for (size_t k = frac_digits; k < 3; ++k) frac *= 10;
    constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    if (whole > (kMax - 1000) / 1000) return std::nullopt;
    uint64_t ns = whole * 1000 + frac + (round_up ? 1 : 0);
    return neg ? -static_cast<int64_t>(ns) : static_cast<int64_t>(ns);
  }
  // Exponent or other forms ("1.69512E+15"): long double keeps ~19 significant digits.
  std::string tmp(s);
  char* end = nullptr;
  long double v = std::strtold(tmp.c_str(), &end);
  if (end != tmp.c_str() + tmp.size() || !std::isfinite(v)) return std::nullopt;
  long double ns = std::roundl(v * 1000.0L);
  if (std::fabs(ns) > 9.2e18L) return std::nullopt;
  return static_cast<int64_t>(ns);
}

std::optional<double> parse_double(std::string_view s) {
  s = trim(s);
  if (is_null_cell(s)) return std::nullopt;
  if (s.front() == '+') s.remove_prefix(1);
  double v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<int64_t> parse_int64(std::string_view s) {
  s = trim(s);
  if (is_null_cell(s)) return std::nullopt;
  if (s.front() == '+') s.remove_prefix(1);
  int64_t v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

int64_t us_double_to_ns(double us) {
  const double ns = std::round(us * 1000.0);
  if (!(ns < 9.2e18 && ns > -9.2e18)) return 0;
  return static_cast<int64_t>(ns);
}

void append_us(std::string& out, int64_t ns) {
  const uint64_t a = ns < 0 ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  if (ns < 0) out += '-';
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, a / 1000);
  out.append(buf, r.ptr);
  const auto frac = static_cast<unsigned>(a % 1000);
  out += '.';
  out += static_cast<char>('0' + frac / 100);
  out += static_cast<char>('0' + frac / 10 % 10);
  out += static_cast<char>('0' + frac % 10);
}

}  // namespace ascprof
