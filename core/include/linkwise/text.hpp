// Case folding and joining of names (GPU ids, providers, accelerator names), and money as the
// answers' words print it, for core and its front ends alike. ASCII only: every name linkwise
// compares is ASCII.
#pragma once

#include <cctype>
#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace linkwise::text {

inline std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

inline std::string upper(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// "a, b, c": names as an error or an answer lists them.
inline std::string join(const std::vector<std::string>& names, std::string_view separator = ", ") {
  std::string out;
  for (const std::string& name : names) {
    if (!out.empty()) out += separator;
    out += name;
  }
  return out;
}

// "$51,885": dollars as a sentence of an answer prints them, whole, with thousands separators (the
// web page and the CLI tables print the same figures; "$51885" is hard to read).
inline std::string dollars(double usd) {
  char digits[64];
  std::snprintf(digits, sizeof digits, "%.0f", std::fabs(usd));
  const std::string_view whole(digits);
  std::string out = usd < 0 && std::lround(usd) != 0 ? "-$" : "$";
  for (std::size_t i = 0; i < whole.size(); ++i) {
    if (i > 0 && (whole.size() - i) % 3 == 0) out += ',';
    out += whole[i];
  }
  return out;
}

}  // namespace linkwise::text
