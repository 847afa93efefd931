#!/usr/bin/env bash
# Checks that every C++ and CUDA file is formatted as .clang-format says, changing nothing:
# exits 1 and lists the places when one is not. To reformat instead:
#   bash scripts/format-check.sh --fix
# Needs clang-format 14 or newer (Debian 12: apt install clang-format; scripts/install-deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

# The tree is formatted by clang-format 14 (Debian 12's); other major versions lay code out
# differently, so they are refused rather than reported as hundreds of violations.
CLANG_FORMAT=${CLANG_FORMAT:-$(command -v clang-format-14 || command -v clang-format || true)}
if [[ -z "$CLANG_FORMAT" ]]; then
  echo "format-check: clang-format not found (apt install clang-format)" >&2
  exit 2
fi
major=$("$CLANG_FORMAT" --version | sed -nE 's/.*version ([0-9]+)\..*/\1/p')
if [[ "$major" != "14" ]]; then
  echo "format-check: $CLANG_FORMAT is clang-format $major; the tree is formatted by clang-format 14 (set CLANG_FORMAT)" >&2
  exit 2
fi

# The tracked sources of the folders that hold C++ (generated files live in build*/, never here).
mapfile -t files < <(git ls-files -- core service bindings probes tests fuzz |
                     grep -E '\.(cpp|hpp|cu|cuh|h)$' || true)
if [[ ${#files[@]} -eq 0 ]]; then
  echo "format-check: no files" >&2
  exit 2
fi

if [[ "${1:-}" == "--fix" ]]; then
  "$CLANG_FORMAT" -i "${files[@]}"
  echo "format-check: formatted ${#files[@]} files"
  exit 0
fi
"$CLANG_FORMAT" --dry-run --Werror "${files[@]}"
echo "format-check: ${#files[@]} files formatted as .clang-format says"
