// Name suggestions; the ranking is documented in suggest.hpp.
#include "suggest.hpp"
#include "linkwise/text.hpp"

#include <algorithm>
#include <cctype>
#include <tuple>

namespace linkwise {
namespace {

using text::lower;

std::vector<std::string> tokens(const std::string& name) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t dash = name.find('-', start);
    out.push_back(name.substr(start, dash - start));
    if (dash == std::string::npos) return out;
    start = dash + 1;
  }
}

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && text.compare(0, prefix.size(), prefix) == 0;
}

// Rule 1 of closest_names.
bool tokens_contained(const std::vector<std::string>& wanted, const std::vector<std::string>& candidate) {
  if (wanted.size() < 2 || wanted.front() != candidate.front()) return false;
  for (std::size_t i = 1; i < wanted.size(); ++i) {
    if (wanted[i].empty()) return false;
    const bool found = std::any_of(candidate.begin() + 1, candidate.end(),
                                   [&](const std::string& token) { return starts_with(token, wanted[i]); });
    if (!found) return false;
  }
  return true;
}

}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rows of the dynamic programme: two back is needed for transpositions.
  std::vector<std::size_t> before(b.size() + 1), previous(b.size() + 1), row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      row[j] = std::min({previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        row[j] = std::min(row[j], before[j - 2] + 1);
      }
    }
    std::swap(before, previous);
    std::swap(previous, row);
  }
  return previous[b.size()];
}

std::vector<std::string> closest_names(std::string_view wanted, const std::vector<std::string>& candidates,
                                       std::size_t limit) {
  const std::string want = lower(wanted);
  if (want.empty()) return {};
  const std::vector<std::string> want_tokens = tokens(want);
  const std::size_t max_distance = std::max<std::size_t>(1, want.size() / 4);

  // (rule, then distance or length, then the name) for every close candidate.
  std::vector<std::tuple<int, std::size_t, std::string>> ranked;
  for (const std::string& candidate : candidates) {
    const std::string name = lower(candidate);
    if (name == want) continue;
    if (tokens_contained(want_tokens, tokens(name))) {
      ranked.emplace_back(1, name.size(), candidate);
    } else if (starts_with(name, want)) {
      ranked.emplace_back(2, name.size(), candidate);
    } else if (const std::size_t gap =
                   name.size() > want.size() ? name.size() - want.size() : want.size() - name.size();
               gap > max_distance) {
      // The lengths alone put it out of reach (the distance is at least the gap): no quadratic
      // table for a megabyte-long unknown id against every name.
      continue;
    } else if (const std::size_t d = edit_distance(want, name); d <= max_distance) {
      ranked.emplace_back(3, d, candidate);
    }
  }
  std::sort(ranked.begin(), ranked.end());
  // Edits are the weakest evidence: only when no name shares the tokens or the start, and then
  // only the closest ones.
  if (!ranked.empty() && std::get<0>(ranked.front()) == 3) {
    const std::size_t closest = std::get<1>(ranked.front());
    std::erase_if(ranked, [&](const auto& entry) { return std::get<1>(entry) != closest; });
  } else {
    std::erase_if(ranked, [](const auto& entry) { return std::get<0>(entry) == 3; });
  }

  std::vector<std::string> out;
  for (const auto& [rule, order, candidate] : ranked) {
    if (out.size() == limit) break;
    const std::string name = lower(candidate);
    const bool covered = std::any_of(out.begin(), out.end(), [&](const std::string& chosen) {
      const std::string family = lower(chosen);
      return name.size() > family.size() && starts_with(name, family) && name[family.size()] == '-';
    });
    if (!covered && std::find(out.begin(), out.end(), candidate) == out.end()) out.push_back(candidate);
  }
  return out;
}

std::string did_you_mean(const std::vector<std::string>& names) {
  if (names.empty()) return {};
  std::string out = "did you mean ";
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += "\"" + names[i] + "\"";
  }
  return out + "?";
}

}  // namespace linkwise
