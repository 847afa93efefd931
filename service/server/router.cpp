#include "server/router.hpp"

namespace linkwise::server {
namespace {

std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> segments;
  if (path.empty() || path.front() != '/') return segments;
  path.remove_prefix(1);
  while (true) {
    const auto slash = path.find('/');
    segments.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return segments;
}

bool is_capture(std::string_view segment) {
  return segment.size() > 2 && segment.front() == '{' && segment.back() == '}';
}

}  // namespace

void Router::add(std::string method, std::string path_template, Handler handler) {
  for (auto& route : routes_) {
    if (route.path_template == path_template) {
      route.handlers[std::move(method)] = std::move(handler);
      return;
    }
  }
  Route route;
  for (auto segment : split_path(path_template)) route.segments.emplace_back(segment);
  route.path_template = std::move(path_template);
  route.handlers[std::move(method)] = std::move(handler);
  routes_.push_back(std::move(route));
}

Router::Match Router::match(std::string_view method, std::string_view path) const {
  Match result;
  const auto segments = split_path(path);
  if (segments.empty()) return result;
  for (const auto& route : routes_) {
    if (route.segments.size() != segments.size()) continue;
    PathParams params;
    bool same = true;
    for (std::size_t i = 0; i < segments.size() && same; ++i) {
      const auto& expected = route.segments[i];
      if (is_capture(expected)) {
        if (segments[i].empty()) same = false;
        else params.emplace(expected.substr(1, expected.size() - 2), segments[i]);
      } else {
        same = expected == segments[i];
      }
    }
    if (!same) continue;

    result.route = &route.path_template;
    const std::string_view lookup = method == "HEAD" ? std::string_view("GET") : method;
    if (auto it = route.handlers.find(lookup); it != route.handlers.end()) {
      result.handler = &it->second;
      result.params = std::move(params);
    } else {
      for (const auto& [allowed, handler] : route.handlers) {
        if (!result.allowed.empty()) result.allowed += ", ";
        result.allowed += allowed;
        if (allowed == "GET") result.allowed += ", HEAD";
      }
    }
    return result;
  }
  return result;
}

}  // namespace linkwise::server
