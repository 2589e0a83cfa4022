// Byte counts as people write them: decimal digits, then optionally a unit K, M, G or T (powers
// of 1024; any case, "KB" and "KiB" mean the same as "K") or B. The one parser of the library's
// environment variables (GPUSORT_STAGING_BYTES) and the CLI's byte options, so that both take the
// same syntax. Header-only: the CLI and the library include it each.
#pragma once

#include <cctype>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpusort {

// The byte count `text` names, or nothing when it is not one (empty, a sign, a fraction, an
// unknown unit, or beyond 2^64 - 1 bytes).
inline std::optional<uint64_t> parse_byte_count(std::string_view text) {
  size_t digits = 0;
  uint64_t value = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') {
    const uint64_t digit = uint64_t(text[digits] - '0');
    if (value > (~uint64_t(0) - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
    ++digits;
  }
  if (digits == 0) return std::nullopt;
  std::string unit(text.substr(digits));
  for (char& c : unit) c = char(std::toupper(static_cast<unsigned char>(c)));
  if (unit.size() > 1 && std::string_view("KMGT").find(unit[0]) != std::string_view::npos &&
      (unit.substr(1) == "B" || unit.substr(1) == "IB"))
    unit.resize(1);
  int shift = 0;
  if (unit == "K")
    shift = 10;
  else if (unit == "M")
    shift = 20;
  else if (unit == "G")
    shift = 30;
  else if (unit == "T")
    shift = 40;
  else if (!unit.empty() && unit != "B")
    return std::nullopt;
  if (shift && value > (~uint64_t(0) >> shift)) return std::nullopt;
  return value << shift;
}

}  // namespace gpusort
