// What the fuzz targets share: a finding is reported by abort() (libFuzzer and the replay main both
// stop there), after a line saying what broke.
#pragma once

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace linkwise::fuzz {

[[noreturn]] inline void finding(std::string_view what) {
  std::fprintf(stderr, "fuzz finding: %.*s\n", static_cast<int>(what.size()), what.data());
  std::abort();
}

// Every number in an answer is finite: NaN and inf would reach clients as null (or as nonsense).
// Iterative, as the documents may be deep.
inline void require_finite_numbers(const nlohmann::json& document, std::string_view where) {
  std::vector<const nlohmann::json*> todo{&document};
  while (!todo.empty()) {
    const nlohmann::json* value = todo.back();
    todo.pop_back();
    if (value->is_number_float() && !std::isfinite(value->get<double>())) {
      finding(std::string(where) + ": a non-finite number in the output");
    }
    if (value->is_structured()) {
      for (const auto& item : *value) todo.push_back(&item);
    }
  }
}

}  // namespace linkwise::fuzz
