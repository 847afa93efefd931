#include "server/server.hpp"

#include <httplib.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <thread>

#include <nlohmann/json.hpp>

#include "linkwise/error.hpp"
#include "linkwise/planner/search.hpp"
#include "server/compute_gate.hpp"
#include "server/connection.hpp"
#include "server/handlers.hpp"
#include "server/problem.hpp"
#include "server/request.hpp"

namespace linkwise::server {

// Debian's cpp-httplib listens with a backlog of 5, so a burst of new connections (64 clients
// starting at once) would see SYN drops and one-second retries; listen() again with a long queue.
// process_and_close_socket is cpp-httplib's per-connection entry (a virtual, run on a pool worker
// for each accepted socket); it is replaced by connection.hpp's reception and bounded reads, and
// each complete request still goes through cpp-httplib's own parser and our handlers.
class Server::Http : public httplib::Server {
 public:
  Http(const ConnectionLimits& limits, Reception::Screen screen)
      : limits_(limits),
        reception_(
            limits, [this](std::shared_ptr<Connection> c) { enqueue(std::move(c)); }, std::move(screen)) {}

  void widen_backlog() { ::listen(svr_sock_, SOMAXCONN); }
  void set_pool(httplib::ThreadPool* pool) { pool_ = pool; }
  // Closes the connections waiting for a next request; those being served finish.
  void stop_reception() { reception_.stop(); }

 private:
  bool process_and_close_socket(socket_t sock) override {
    auto connection = std::make_shared<Connection>(sock);
    connection->fill_available(limits_);
    if (connection->ready(limits_)) serve(std::move(connection));
    else reception_.hold(std::move(connection));
    return true;
  }

  void enqueue(std::shared_ptr<Connection> connection) {
    pool_->enqueue([this, connection] { serve(connection); });
  }

  void serve(std::shared_ptr<Connection> connection);

  const ConnectionLimits limits_;
  httplib::ThreadPool* pool_ = nullptr;
  Reception reception_;
};

// One connection's requests, one after another, while each is ready (all of it in, see
// connection.hpp); then back to the reception, or closed.
void Server::Http::serve(std::shared_ptr<Connection> connection) {
  const Connection::Serving serving(*connection);  // for current_client_gone()
  for (std::size_t served = 0;; ++served) {
    // Range is ignored (RFC 9110 section 14.2 lets a server ignore it; on a POST it means nothing):
    // dropped before cpp-httplib parses it, which would cut a 200 to the range and keep its status,
    // or answer an unparseable one 416 before any handler.
    HeadCheck head = connection->head(limits_);
    if (head.state == HeadCheck::State::complete && connection->drop_header("Range")) head = connection->head(limits_);
    if (head.state == HeadCheck::State::refused) {
      const char* field = head.status == 431 ? "headers" : head.status == 413 ? "body" : "Content-Length";
      connection->answer_and_shut(problem_for_status(head.status, head.detail, field));
      reception_.linger(std::move(connection));
      return;
    }
    connection->begin_request(head.head_bytes + head.content_length,
                              std::chrono::steady_clock::now() + limits_.body_timeout);
    // A chunked body, or a POST/PUT/PATCH without Content-Length, is refused (411) without being
    // read; what the client sends next is that body, not a request, so the connection closes.
    const bool unframed = head.chunked || (!head.has_content_length &&
                                           (head.method == "POST" || head.method == "PUT" || head.method == "PATCH"));
    const bool last = served + 1 >= keep_alive_max_count_ || svr_sock_ == INVALID_SOCKET || unframed;
    bool closed_by_handler = false;
    const bool ok = process_request(*connection, last, closed_by_handler, nullptr);
    // A body the handler did not read (a GET with a body, an answer given before reading it) is
    // skipped, so the next request starts where it should.
    // Closing drains in the reception's loop (linger()), not on this worker.
    if (!ok || closed_by_handler || last || !connection->skip_unread_body()) {
      reception_.linger(std::move(connection));
      return;
    }
    connection->release_spent();
    if (!connection->fill_available(limits_)) {
      reception_.linger(std::move(connection));
      return;
    }
    if (!connection->ready(limits_)) {
      reception_.hold(std::move(connection));
      return;
    }
  }
}

namespace {

// Per-request state from routing to the log line. cpp-httplib serves a connection's requests one
// after another on one pool thread, so a thread_local holds exactly the current request's.
using Clock = std::chrono::steady_clock;

struct RequestTrace {
  Clock::time_point start{};
  const std::string* route = nullptr;
};
thread_local RequestTrace current;

const std::string kUnmatched = "unmatched";

}  // namespace

Server::Server(Context& ctx, ServerOptions options) : ctx_(ctx), options_(std::move(options)) {
  ConnectionLimits limits;
  limits.max_body_bytes = options_.max_body_bytes;
  http_ = std::make_unique<Http>(limits, [this](const HeadCheck& head) { return screen(head); });
  add_system_routes(router_, ctx_);
  add_catalog_routes(router_, ctx_);
  add_report_routes(router_, ctx_);
  add_planner_routes(router_, ctx_);
  add_web_routes(router_, ctx_);

  auto& http = *http_;
  const int threads = options_.threads;
  http.new_task_queue = [&http, threads] {
    auto* pool = new httplib::ThreadPool(static_cast<std::size_t>(threads));
    http.set_pool(pool);
    return pool;
  };
  http.set_tcp_nodelay(true);  // small JSON responses must not wait for Nagle's algorithm
  // cpp-httplib's default sets SO_REUSEPORT, which lets a second server (or any process of this
  // user) bind the same port and take a share of the connections; SO_REUSEADDR alone restarts
  // cleanly over TIME_WAIT and refuses a port that is in use.
  http.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  http.set_keep_alive_max_count(100000);
  http.set_keep_alive_timeout(2);  // also bounds how long an idle connection delays shutdown
  http.set_read_timeout(10);
  http.set_write_timeout(10);
  http.set_payload_max_length(options_.max_body_bytes);

  http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    return pre_route(req, res) ? httplib::Server::HandlerResponse::Handled
                               : httplib::Server::HandlerResponse::Unhandled;
  });
  // "Expect: 100-continue" whose body is already in (the reception answers the others itself):
  // a request pre_route refuses gets its final answer instead of "100 Continue".
  http.set_expect_100_continue_handler(
      [this](const httplib::Request& req, httplib::Response& res) { return pre_route(req, res) ? res.status : 100; });

  const auto handler = [this](const httplib::Request& req, httplib::Response& res) { dispatch(req, res); };
  // One catch-all route per method: the Router decides between a handler, 404 and 405.
  const httplib::Server::Handler all(handler);
  http.Get(".*", all).Post(".*", all).Put(".*", all).Patch(".*", all).Delete(".*", all).Options(".*", all);

  // Statuses cpp-httplib sets itself (400 for an unparsable request, 413, 414) get a problem body too.
  http.set_error_handler(httplib::Server::HandlerWithResponse([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    std::string detail = "the request could not be read";
    if (res.status == 413) detail = "the body is over the size limit of this server";
    else if (res.status == 414) detail = "the request line is too long";
    else if (res.status == 400 && (req.method == "TRACE" || req.method == "CONNECT")) {
      // pre_route answers these; kept should a path ever reach here. Every 405 carries Allow.
      res.set_header("Allow", "");
      write_problem(res, problem_for_status(405, req.method + " is not supported"), req.path);
      return httplib::Server::HandlerResponse::Handled;
    }
    write_problem(res, problem_for_status(res.status, detail, res.status == 413 ? "body" : ""), req.path);
    return httplib::Server::HandlerResponse::Handled;
  }));
  // dispatch() catches everything; this is the last line of defence should that ever change.
  http.set_exception_handler([](const httplib::Request& req, httplib::Response& res, std::exception_ptr) {
    write_problem(res, problem_for_status(500, "internal error; see the server log"), req.path);
  });
  http.set_logger([this](const httplib::Request& req, const httplib::Response& res) { log(req, res); });
}

Server::~Server() = default;

void Server::bind() {
  if (!http_->bind_to_port(options_.host, options_.port)) {
    throw Error(ErrorKind::io,
                "cannot listen on " + options_.host + ":" + std::to_string(options_.port) +
                    " (address in use, or not an address of this machine)",
                "port");
  }
  http_->widen_backlog();
  bound_port_ = options_.port;
}

void Server::run() {
  if (!stop_requested_) http_->listen_after_bind();
  finished_ = true;
}

void Server::stop() {
  // A signal may arrive before run() has started listening; wait for that, or for run() to end.
  stop_requested_ = true;
  while (!finished_) {
    if (http_->is_running()) {
      http_->stop_reception();
      http_->stop();
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

bool Server::pre_route(const httplib::Request& req, httplib::Response& res) {
  current = {Clock::now(), &kUnmatched};
  if (req.target.size() > options_.max_target_bytes) {
    write_problem(res,
                  problem_for_status(414, "path and query are " + std::to_string(req.target.size()) +
                                              " bytes; at most " + std::to_string(options_.max_target_bytes) +
                                              " are accepted"),
                  "");
    return true;
  }
  // Bodies are bounded by Content-Length (the reception answers 413 past the limit before reading
  // it); a chunked body has no length to check up front, so it is refused, and the connection
  // closed since its body was not read.
  if (req.has_header("Transfer-Encoding")) {
    res.set_header("Connection", "close");
    write_problem(res, problem_for_status(411, "send the body with a Content-Length, not chunked", "Content-Length"),
                  req.path);
    return true;
  }
  // Routing before the body is read (cpp-httplib reads it between this check and the handler):
  // an unknown path or a method the path does not take is answered without waiting for a body.
  const auto match = router_.match(req.method, req.path);
  if (!match.route || !match.handler) {
    dispatch(req, res);
    return true;
  }
  // cpp-httplib reads a POST, PUT or PATCH without Content-Length "until the connection closes"
  // (RFC 9112 6.3 says such a request has no body, but the client may well mean to send one).
  if ((req.method == "POST" || req.method == "PUT" || req.method == "PATCH") && !req.has_header("Content-Length")) {
    write_problem(res, problem_for_status(411, "send the body with a Content-Length header", "Content-Length"),
                  req.path);
    return true;
  }
  return false;
}

namespace {
// What a request gets when the router has no handler for it: 404 for an unknown path, 405 (with
// Allow) for a method the path does not take. One wording for the reception's early answer
// (screen, before the body) and the worker's (dispatch).
std::optional<EarlyAnswer> routing_refusal(const Router::Match& match, std::string_view method, std::string_view path) {
  if (!match.route) return EarlyAnswer{404, "no resource at " + std::string(path) + "; see /openapi.json", ""};
  if (!match.handler)
    return EarlyAnswer{405, std::string(method) + " is not allowed on " + *match.route + "; allowed: " + match.allowed,
                       "Allow: " + match.allowed + "\r\n"};
  return std::nullopt;
}
}  // namespace

std::optional<EarlyAnswer> Server::screen(const HeadCheck& head) const {
  // The same routing as pre_route, on the path as sent; a percent-encoded path is left to the
  // worker, which routes it decoded (this screen only spares the client a body sent in vain).
  const std::string_view target = head.target;
  const std::string path(target.substr(0, target.find('?')));
  if (path.empty() || path.front() != '/' || path.find('%') != std::string::npos) return std::nullopt;
  return routing_refusal(router_.match(head.method, path), head.method, path);
}

void Server::handle(const httplib::Request& req, httplib::Response& res) {
  if (!pre_route(req, res)) dispatch(req, res);
  log(req, res);
}

void Server::dispatch(const httplib::Request& req, httplib::Response& res) {
  const auto match = router_.match(req.method, req.path);
  if (!match.route && req.method == "CONNECT") {
    // Not a proxy: CONNECT's target names no resource here; 405 with an empty Allow (RFC 9110 10.2.1).
    res.set_header("Allow", "");
    write_problem(res, problem_for_status(405, "CONNECT is not supported: this server is not a proxy"), req.path);
    return;
  }
  current.route = match.route;
  if (const auto refusal = routing_refusal(match, req.method, req.path)) {
    if (match.route) res.set_header("Allow", match.allowed);  // the 405
    write_problem(res, problem_for_status(refusal->status, refusal->detail), req.path);
    return;
  }
  try {
    (*match.handler)(req, res, match.params);
  } catch (const planner::SearchStopped&) {
    // The client left before its search finished (handlers_planner.cpp): nobody reads this.
    res = httplib::Response{};
    res.set_header("Connection", "close");
    write_problem(res, problem_for_status(503, "the client closed the connection; the search was dropped"), req.path);
  } catch (const GateFull& full) {
    res = httplib::Response{};
    res.set_header("Retry-After", "1");
    write_problem(res,
                  problem_for_status(503, std::to_string(full.waiting) +
                                              " planner searches are already queued; retry after a second"),
                  req.path);
  } catch (const UnsupportedMediaType& e) {
    res = httplib::Response{};
    write_problem(res, problem_for_status(415, e.detail, "Content-Type"), req.path);
  } catch (const Error& e) {
    res = httplib::Response{};
    const Problem problem = problem_from(e);
    if (problem.status >= 500)
      std::cerr << "linkwise serve: " << req.method << ' ' << req.path << ": " << e.what() << "\n";
    write_problem(res, problem, req.path);
  } catch (const nlohmann::json::exception& e) {
    // A value of the wrong JSON type reached code that reads it with get<>(): the client's fault.
    res = httplib::Response{};
    write_problem(res, problem_for_status(400, std::string("body: ") + e.what(), "body"), req.path);
  } catch (const std::exception& e) {
    res = httplib::Response{};
    std::cerr << "linkwise serve: " << req.method << ' ' << req.path << ": internal error: " << e.what() << "\n";
    write_problem(res, problem_for_status(500, "internal error; see the server log"), req.path);
  }
}

void Server::log(const httplib::Request& req, const httplib::Response& res) {
  const auto now = Clock::now();
  const double seconds =
      current.start == Clock::time_point{} ? 0.0 : std::chrono::duration<double>(now - current.start).count();
  const std::string& route = current.route ? *current.route : kUnmatched;
  ctx_.metrics.observe(route, req.method, res.status, seconds);
  current = {};
  if (!options_.access_log) return;
  // Method, target, status, size, time: never a header, so no key reaches the log.
  char line[512];
  std::string target = req.target.size() > 200 ? req.target.substr(0, 200) + "..." : req.target;
  for (char& c : target) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';  // no forged log lines
  }
  const int n = std::snprintf(line, sizeof line, "%s %s %s %d %zuB %.3fms\n", req.remote_addr.c_str(),
                              req.method.c_str(), target.c_str(), res.status,
                              res.body.empty() ? res.content_length_ : res.body.size(), seconds * 1e3);
  if (n > 0) std::fwrite(line, 1, static_cast<std::size_t>(std::min<int>(n, sizeof line - 1)), stderr);
}

}  // namespace linkwise::server
