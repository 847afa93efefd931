// The HTTP server: cpp-httplib set up for throughput and safety, every request routed through the
// Router, every failure answered as problem+json, every response counted and logged.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "linkwise/json_input.hpp"
#include "server/connection.hpp"
#include "server/context.hpp"
#include "server/router.hpp"

namespace linkwise::server {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;
  // Workers: requests served at once. A connection holds one only while a request of it is being
  // served (connection.hpp): slow or idle clients wait in the reception thread instead.
  int threads = 64;
  std::size_t max_body_bytes = kMaxDocumentBytes;  // json_input.hpp: the CLI's bound on JSON files too
  std::size_t max_target_bytes = 4096;             // path + query string
  bool access_log = true;                          // one line per request on stderr
};

class Server {
 public:
  Server(Context& ctx, ServerOptions options);
  ~Server();

  // Binds the socket; throws io if the address is taken or not local to this machine.
  void bind();
  int port() const { return bound_port_; }
  // Serves until stop(); then waits for in-flight requests to finish.
  void run();
  // Stops accepting connections (run() then drains and returns); safe from any thread.
  void stop();

  // Answers one request already read off the wire, without a socket, as the server does after
  // cpp-httplib has parsed it: the pre-routing checks, the Router and handlers, then the metrics
  // and the access log. For the fuzzers (fuzz/http_request.cpp) and tests; `req` as cpp-httplib
  // fills it (method, target, path, params, headers, body).
  void handle(const httplib::Request& req, httplib::Response& res);

 private:
  class Http;  // httplib::Server with access to its listening socket
  // The checks before the body is read (target length, chunked bodies, 404, 405, 411); true
  // when they answered.
  bool pre_route(const httplib::Request& req, httplib::Response& res);
  // The reception's check of a request whose body is still to come (404, 405): connection.hpp.
  std::optional<EarlyAnswer> screen(const HeadCheck& head) const;
  void dispatch(const httplib::Request& req, httplib::Response& res);
  void log(const httplib::Request& req, const httplib::Response& res);

  Context& ctx_;
  ServerOptions options_;
  Router router_;
  std::unique_ptr<Http> http_;
  int bound_port_ = 0;
  std::atomic<bool> stop_requested_{false};
  std::atomic<bool> finished_{false};
};

}  // namespace linkwise::server
