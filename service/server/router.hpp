// Routes by path template ("/v1/instances/{id}") and method, without regular expressions: a
// path is split at '/' and each "{name}" segment captures one segment. The router tells a path it
// does not know (404) from a method the path does not take (405, with the methods it does take).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace linkwise::server {

// Captured "{name}" segments, in template order.
using PathParams = std::map<std::string, std::string, std::less<>>;
using Handler = std::function<void(const httplib::Request&, httplib::Response&, const PathParams&)>;

class Router {
 public:
  // `path_template` like "/v1/instances/{id}/validation"; method "GET", "POST", ...
  void add(std::string method, std::string path_template, Handler handler);

  struct Match {
    const std::string* route = nullptr;  // the template that matched the path; null: unknown path
    const Handler* handler = nullptr;    // null with a route: the method is not allowed
    PathParams params;
    std::string allowed;  // "GET, HEAD" ... for the Allow header of a 405
  };
  // HEAD is answered by the GET handler.
  Match match(std::string_view method, std::string_view path) const;

 private:
  struct Route {
    std::string path_template;
    std::vector<std::string> segments;  // "{id}" marks a capture
    std::map<std::string, Handler, std::less<>> handlers;
  };
  std::vector<Route> routes_;
};

}  // namespace linkwise::server
