// Case folding and joining of names (GPU ids, providers, accelerator names), internal to core.
// ASCII only: every name linkwise compares is ASCII.
#pragma once

#include <cctype>
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

}  // namespace linkwise::text
