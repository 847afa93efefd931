// "Did you mean ...?": the names a person most likely meant by a name that names nothing. Shared by
// the loader (typos in field names) and the query filters (GPU ids and families, providers);
// private to core/.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace linkwise {

// Edit distance counting insertions, deletions, substitutions and swaps of two neighbours ("gpc"
// to "gcp" is 1), case-sensitive (optimal string alignment).
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidates closest to `wanted`, best first, at most `limit`; empty when none is close.
// Case-insensitive; names are read as '-'-separated tokens ("A100-SXM4-40GB"). Ranked:
//   1. same first token, and every other token of `wanted` begins a token of the candidate
//      ("A100-40GB" -> "A100-SXM4-40GB", "H100-SXM" -> "H100-SXM5-80GB");
//   2. the candidate begins with `wanted` ("H10" -> "H100"), shortest first;
//   3. only when no candidate meets 1 or 2: the candidates at the smallest edit distance, if that
//      is at most 1, or a quarter of the name when longer ("gpc" -> "gcp", "A100-SMX4-40GB" ->
//      "A100-SXM4-40GB"; "B200" is not "A100").
// A candidate is left out when one already chosen is a leading part of it ending at a '-' (the
// family "H100" stands for "H100-SXM5-80GB").
std::vector<std::string> closest_names(std::string_view wanted, const std::vector<std::string>& candidates,
                                       std::size_t limit = 3);

// "did you mean \"A\"?" / "did you mean \"A\" or \"B\"?"; empty for no names.
std::string did_you_mean(const std::vector<std::string>& names);

}  // namespace linkwise
