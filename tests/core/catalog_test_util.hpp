// Helpers for the catalog tests: a scratch directory, the fixture paths, and a way to load a
// fixture data directory with one record changed.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

namespace linkwise::test {

namespace fs = std::filesystem;

inline fs::path catalog_fixtures() { return fs::path(LINKWISE_TEST_FIXTURES_DIR) / "catalog"; }
inline fs::path valid_data_dir() { return catalog_fixtures() / "valid"; }

// A fresh directory under the system temp dir, removed with everything in it at scope exit.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (fs::temp_directory_path() / "linkwise-test-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

inline nlohmann::ordered_json read_json(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::ordered_json::parse(in);
}

inline void write_json(const fs::path& path, const nlohmann::ordered_json& document) {
  std::ofstream out(path);
  out << document.dump(2) << "\n";
}

inline void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

inline std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Copies the valid fixture into `dir`/data and lets `edit` change the JSON of `file` (relative
// to the data dir, e.g. "instances/azure.json"). Returns the data dir.
inline fs::path data_dir_with(const ScratchDir& dir, const std::string& file,
                              const std::function<void(nlohmann::ordered_json&)>& edit) {
  const fs::path data = dir.path() / "data";
  fs::copy(valid_data_dir(), data, fs::copy_options::recursive);
  nlohmann::ordered_json document = read_json(data / file);
  edit(document);
  write_json(data / file, document);
  return data;
}

// The record of `list` ("gpus" or "instances") whose "id" or "name" is `key`.
inline nlohmann::ordered_json& record(nlohmann::ordered_json& document, const std::string& list,
                                      const std::string& key) {
  for (auto& item : document[list]) {
    if ((item.contains("id") && item["id"] == key) || (item.contains("name") && item["name"] == key)) {
      return item;
    }
  }
  throw std::runtime_error("fixture has no record " + key);
}

}  // namespace linkwise::test
