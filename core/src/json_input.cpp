#include "linkwise/json_input.hpp"

#include <fstream>
#include <set>
#include <sstream>
#include <system_error>
#include <utility>
#include <vector>

#include "linkwise/error.hpp"

namespace linkwise {

int json_text_depth(std::string_view text, int limit) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > deepest) deepest = depth;
      if (deepest > limit) return deepest;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

namespace {

[[noreturn]] void too_deep(const std::string& field) {
  throw_invalid(field, field + ": JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
}

// Watches the parser's events for a key written twice in one object: nlohmann keeps the last, and
// the first would be ignored without a word. Tracks the path for the error's field.
class DuplicateKeys {
 public:
  explicit DuplicateKeys(std::string document) : document_(std::move(document)) {}

  bool operator()(int /*depth*/, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using event_t = nlohmann::json::parse_event_t;
    switch (event) {
      case event_t::object_start:
      case event_t::array_start: frames_.push_back({child_segment(), event == event_t::object_start, {}, {}, 0}); break;
      case event_t::object_end:
      case event_t::array_end:
        if (!frames_.empty()) frames_.pop_back();
        break;
      case event_t::key: {
        Frame& object = frames_.back();
        object.key = parsed.get<std::string>();
        if (!object.keys.insert(object.key).second) {
          const std::string where = path_of(frames_.size());
          const std::string path = where.empty() ? object.key : where + "." + object.key;
          throw_invalid(path, document_ + ": the key '" + object.key + "' appears twice in " +
                                  (where.empty() ? std::string("the document") : "'" + where + "'") +
                                  " (a JSON parser would keep only one of them): write it once");
        }
        break;
      }
      case event_t::value:
        if (!frames_.empty() && !frames_.back().object) ++frames_.back().items;
        break;
    }
    return true;  // keep every value
  }

 private:
  struct Frame {
    std::string segment;  // how its parent names it: the key, or "[i]"; empty for the document
    bool object = false;
    std::set<std::string> keys;  // objects: the keys seen
    std::string key;             // objects: the key whose value comes next
    std::size_t items = 0;       // arrays: the elements seen
  };

  // How the parent names the object or array starting now. Each frame keeps only its own segment
  // (memory in proportion to the document, however deep and long its keys); the path is spelled
  // out only for the error.
  std::string child_segment() {
    if (frames_.empty()) return {};
    Frame& parent = frames_.back();
    if (parent.object) return parent.key;
    std::string index = "[";  // built in steps: GCC 12's -Wrestrict misfires on "[" + s + "]"
    index += std::to_string(parent.items++);
    index += ']';
    return index;
  }

  // "job.kind", "instances[3].name": the path of the first `depth` frames.
  std::string path_of(std::size_t depth) const {
    std::string path;
    for (std::size_t i = 1; i < depth; ++i) {
      const std::string& segment = frames_[i].segment;
      if (!path.empty() && (segment.empty() || segment.front() != '[')) path += '.';
      path += segment;
    }
    return path;
  }

  std::string document_;
  std::vector<Frame> frames_;
};

}  // namespace

nlohmann::json parse_json_text(std::string_view text, const std::string& field) {
  if (json_text_depth(text) > kMaxJsonDepth) too_deep(field);
  try {
    return nlohmann::json::parse(text, DuplicateKeys(field));
  } catch (const nlohmann::json::parse_error& e) {
    throw_invalid(field, field + ": not valid JSON (at byte " + std::to_string(e.byte) + ")");
  } catch (const nlohmann::json::out_of_range& e) {
    // nlohmann reports a number beyond the double range (1.8e308) as out_of_range 406.
    throw_invalid(field, field + ": a number is out of range (at most about 1.8e308)");
  }
}

std::string read_text_file(const std::filesystem::path& path, const std::string& field, std::size_t max_bytes) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) throw_invalid(field, field + ": no file " + path.string());
  if (std::filesystem::is_directory(status))
    throw_invalid(field, field + ": " + path.string() + " is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_invalid(field, field + ": cannot read " + path.string());
  // In chunks, never past the bound: a device or pipe (/dev/zero) has no size to check first.
  std::string text;
  char chunk[64 * 1024];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    text.append(chunk, static_cast<std::size_t>(in.gcount()));
    if (text.size() > max_bytes) {
      throw_invalid(field, field + ": " + path.string() + " is over the size limit of " +
                               (max_bytes >= 1024 * 1024 ? std::to_string(max_bytes / (1024 * 1024)) + " MiB"
                                                         : std::to_string(max_bytes / 1024) + " KiB"));
    }
  }
  if (in.bad()) throw_invalid(field, field + ": cannot read " + path.string());
  return text;
}

nlohmann::json read_json_file(const std::filesystem::path& path, const std::string& field) {
  const std::string text = read_text_file(path, field, kMaxDocumentBytes);
  return parse_json_text(text, field + " (" + path.string() + ")");
}

void check_json_depth(const nlohmann::json& document, const std::string& field) {
  std::vector<std::pair<const nlohmann::json*, int>> pending{{&document, 1}};
  while (!pending.empty()) {
    const auto [value, depth] = pending.back();
    pending.pop_back();
    if (!value->is_structured()) continue;
    if (depth > kMaxJsonDepth) too_deep(field.empty() ? std::string("document") : field);
    for (const auto& item : *value) pending.emplace_back(&item, depth + 1);
  }
}

}  // namespace linkwise
