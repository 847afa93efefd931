// Fuzz target: the catalog loader (Catalog::load_data_dir) on a data directory written from the
// input. The input is gpus.json, then one instances/<provider>.json per part after a line
// "=====" (fuzz/corpus/catalog_load/ has the layout); the file is named after the part's
// "provider" when it has a plain one, so the loader's checks past the file name are reached.
// A directory that loads is saved to a SQLite file and opened again: both must agree.
// linkwise::Error is the expected answer to bad data; anything else is a finding.
#include <unistd.h>

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "linkwise/catalog_db.hpp"
#include "linkwise/error.hpp"

namespace {

namespace fs = std::filesystem;

constexpr std::string_view kSeparator = "\n=====\n";

// A directory of this process, removed at exit; in /dev/shm where there is one, since saving a
// catalog syncs the file (75 ms per input on disk, nothing on tmpfs).
struct Scratch {
  fs::path path;
  Scratch() {
    std::error_code ec;
    const fs::path base = fs::is_directory("/dev/shm", ec) ? fs::path("/dev/shm") : fs::temp_directory_path();
    std::string pattern = (base / "linkwise-fuzz-catalog-XXXXXX").string();
    if (!mkdtemp(pattern.data())) linkwise::fuzz::finding("cannot create a temporary directory");
    path = pattern;
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

void write_file(const fs::path& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
}

// The value of the first "provider": "..." in the text, when it is a short lowercase name.
std::string provider_of(std::string_view text, std::size_t index) {
  const auto key = text.find("\"provider\"");
  const auto colon = key == std::string_view::npos ? key : text.find(':', key);
  const auto open = colon == std::string_view::npos ? colon : text.find('"', colon);
  const auto close = open == std::string_view::npos ? open : text.find('"', open + 1);
  if (close != std::string_view::npos) {
    const std::string_view name = text.substr(open + 1, close - open - 1);
    bool plain = !name.empty() && name.size() <= 32;
    for (char c : name) plain = plain && (std::islower(static_cast<unsigned char>(c)) || c == '-');
    if (plain) return std::string(name);
  }
  return "file" + std::to_string(index);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace linkwise;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string_view> parts;
  for (std::size_t start = 0;;) {
    const auto end = input.find(kSeparator, start);
    parts.push_back(input.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) break;
    start = end + kSeparator.size();
  }
  if (parts.size() > 8) return 0;

  static const Scratch scratch;
  const fs::path& dir = scratch.path;
  std::error_code ec;
  fs::remove_all(dir / "instances", ec);
  fs::remove(dir / "catalog.db", ec);
  write_file(dir / "gpus.json", parts[0]);
  if (parts.size() > 1) {
    fs::create_directory(dir / "instances");
    for (std::size_t i = 1; i < parts.size(); ++i) {
      write_file(dir / "instances" / (provider_of(parts[i], i) + ".json"), parts[i]);
    }
  }

  Catalog catalog;
  try {
    catalog = Catalog::load_data_dir(dir);
  } catch (const Error&) {
    return 0;
  }
  try {
    save_catalog(catalog, dir / "catalog.db");
    const Catalog reopened = Catalog::open(dir / "catalog.db");
    if (reopened.gpus().size() != catalog.gpus().size() || reopened.instances().size() != catalog.instances().size()) {
      fuzz::finding("the saved catalog reads back with another number of records");
    }
    for (std::size_t i = 0; i < catalog.instances().size(); ++i) {
      if (!reopened.find_instance(catalog.instances()[i].id)) fuzz::finding("an instance was lost in the database");
    }
  } catch (const Error& e) {
    fuzz::finding(std::string("a catalog that loaded could not be saved and opened again: ") + e.what());
  }
  return 0;
}
