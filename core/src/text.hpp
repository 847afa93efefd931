// Case folding for names (GPU ids, providers, accelerator names), internal to core. ASCII only:
// every name linkwise compares is ASCII.
#pragma once

#include <cctype>
#include <string>
#include <string_view>

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

}  // namespace linkwise::text
