// The service's connection handling, in front of cpp-httplib's request parser. cpp-httplib gives
// each connection a worker thread from accept to close and trusts the client's pace and size, so
// 64 clients sending one byte every 2 s held every worker, and a head of 2 million header lines
// grew the process by 600 MB. Here a connection reaches a worker only once its whole request has
// arrived, head AND body:
//   - Reception: one epoll thread holds connections while their next request arrives, with a
//     deadline (408 on a partial head or body, a silent close for an idle keep-alive connection),
//     and refuses oversized heads (431), too many header lines (431), conflicting or malformed
//     Content-Length (400) and bodies over the size limit (413) before any worker sees them. A
//     body that must still arrive is first screened (Screen: 404, 405 with Allow, without waiting
//     for it), then awaited here, answering "Expect: 100-continue" itself. Before, a worker took
//     a request once its head and the first 64 KiB of body were in and then waited up to the body
//     deadline (10 s) for the rest: 64 POSTs without Content-Length (read "until the connection
//     closes" by cpp-httplib), or with a body that stops short, or waiting on 100-continue, held
//     all 64 workers and /healthz waited 10 s behind them.
//   - Connection: the httplib::Stream a worker reads the request through. It ends where the
//     request does (head + Content-Length): a read past it is end-of-stream, never a wait for the
//     client, so a DELETE without Content-Length has an empty body at once. After the answer it
//     skips any body cpp-httplib left unread (a GET with a body), so pipelined requests are
//     answered in order, and it closes gracefully (FIN, then drain) so an answer is never lost
//     to a connection reset. That drain (up to 500 ms for the client's FIN) is the reception's
//     "closing" state, never a wait on a thread: 40 clients cut off at their deadline together
//     used to hold the reception thread 20 s (500 ms each), and early 404s held workers alike.
#pragma once

#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "linkwise/json_input.hpp"

namespace linkwise::server {

struct Problem;

using Clock = std::chrono::steady_clock;

struct ConnectionLimits {
  std::size_t max_head_bytes = 16 * 1024;  // request line + headers
  std::size_t max_header_lines = 100;
  std::chrono::milliseconds head_timeout{10'000};  // from waiting for a request to its complete head
  std::chrono::milliseconds body_timeout{10'000};  // from the complete head to the whole body
  std::chrono::milliseconds idle_timeout{2'000};   // keep-alive: no byte of a next request
  std::size_t max_body_bytes = kMaxDocumentBytes;  // json_input.hpp; Content-Length above it: 413 at once
  // Bodies being received are held in memory by the reception; past this sum a new one is
  // answered 503 (Retry-After) instead of growing the process without bound.
  std::size_t max_receiving_body_bytes = 256 * 1024 * 1024;
};

// What the front of a connection's buffer holds: a request head still arriving, a complete one
// (with its method and body length), or one refused with a status and a reason.
struct HeadCheck {
  enum class State { incomplete, complete, refused } state = State::incomplete;
  int status = 0;                   // refused: 400, 413 or 431
  std::string detail;               // refused: why, for the problem body
  std::string method;               // complete
  std::string target;               // complete: path and query as sent (not decoded)
  std::size_t head_bytes = 0;       // complete: request line + headers + the blank line
  std::size_t content_length = 0;   // complete: 0 without Content-Length
  bool has_content_length = false;  // complete
  bool chunked = false;             // complete: Transfer-Encoding given (refused 411 by the server)
  bool expects_continue = false;    // complete: "Expect: 100-continue" (the body waits for us)
};

// Pure: inspects the bytes at the front of a connection. Tested and fuzzed without a socket.
HeadCheck inspect_head(std::string_view bytes, const ConnectionLimits& limits);

// An early answer to a request whose body has not arrived yet (so the client is not kept
// sending a body that will be refused): its problem and extra header lines.
struct EarlyAnswer {
  int status = 0;
  std::string detail;
  std::string headers;  // e.g. "Allow: GET, HEAD\r\n"
};

// One client connection: its socket and the bytes read from it that no request has consumed yet.
class Connection final : public httplib::Stream {
 public:
  explicit Connection(int sock) : sock_(sock) {}
  ~Connection() override;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Reads what the socket has now, without waiting, up to what the next request needs (its head
  // and body; no more, so a client cannot grow the buffer past a request). False on EOF or error.
  bool fill_available(const ConnectionLimits& limits);
  // Whether a worker can take the next request: its head is refused, or the whole request is in
  // (a chunked one goes at once: the server refuses it without reading its body).
  bool ready(const ConnectionLimits& limits) const;
  // Answers "Expect: 100-continue" with "100 Continue" and drops every Expect line from the
  // buffered head, so cpp-httplib does not send a second one once the body is in. Never waits (it
  // runs under the reception's lock): false when the socket could not take those 25 bytes at once.
  bool send_continue();
  HeadCheck head(const ConnectionLimits& limits) const { return inspect_head(buffer_, limits); }
  // Drops every `name` header line from the buffered head of the next request (whose head is
  // complete: the caller checked), before cpp-httplib parses it. True when one was dropped.
  bool drop_header(std::string_view name);
  bool empty() const { return read_pos_ == buffer_.size(); }

  // Starts a request of `request_bytes` (head + body) that must be read by `deadline`.
  void begin_request(std::size_t request_bytes, Clock::time_point deadline);
  // Skips what the handler left unread of the request's body. False when it did not arrive in time.
  bool skip_unread_body();
  // Answers a refused head or a timeout with its problem+json, without waiting (a short answer
  // fits the socket's buffer; a client that does not read gets it cut short), then FIN
  // (shutdown(SHUT_WR)). The caller hands the connection to Reception::linger() to close.
  // `extra_headers`: whole header lines ("Allow: GET\r\n").
  void answer_and_shut(const Problem& problem, const std::string& extra_headers = {});
  // Sends FIN: the client reads the answer to its end; the socket stays open for drain().
  void shut_write();
  // Reads and drops what the client sent, without waiting. False once it is done: its FIN or a
  // reset came, or 8 MiB were dropped (a body over the 4 MiB limit sent before reading its 413).
  bool drain();
  int fd() const { return sock_; }
  // Whether the client is gone: its connection was reset or failed (POLLHUP/POLLERR), without
  // reading anything. A FIN alone is not gone: a client that half-closes (shutdown(SHUT_WR), as
  // `nc -N` does) still reads its answer, and TCP cannot tell it from one that closed outright
  // until a write to it is refused. So a client that closed with a plain close() is noticed only
  // by the answer's write; one killed with unread data, or that resets, is noticed at once.
  bool peer_closed() const;
  // Gives back the memory of a large request once it is consumed (a keep-alive connection would
  // otherwise keep its 4 MiB buffer until it closes).
  void release_spent();
  // Marks the connection a worker thread is serving, for current_client_gone().
  struct Serving {
    explicit Serving(const Connection& c);
    ~Serving();
    Serving(const Serving&) = delete;
    Serving& operator=(const Serving&) = delete;
  };
  // httplib::Stream
  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, std::size_t size) override;
  ssize_t write(const char* ptr, std::size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return sock_; }

 private:
  int sock_;
  // Read from the socket; bytes before read_pos_ are consumed (only while a request is being read:
  // between requests read_pos_ is 0, so the head checks see the buffer from its start).
  std::string buffer_;
  std::size_t read_pos_ = 0;
  std::size_t request_left_ = 0;  // bytes of the current request not yet consumed
  std::size_t drained_ = 0;       // dropped by drain()
  Clock::time_point deadline_{};
};

// Whether the connection a worker thread is serving now has been reset or failed
// (Connection::peer_closed: a FIN alone is not gone; bytes it sent before are still read). False off a worker thread.
// For the planner: a search nobody waits for is dropped (handlers_planner.cpp). cpp-httplib 0.11.4's Request has no
// such state, so the socket is polled here.
bool current_client_gone();

// Holds connections between requests (see the top of this file) and hands each to `serve` on the
// worker pool once ready(). One thread; stop() closes every connection it holds.
class Reception {
 public:
  using Serve = std::function<void(std::shared_ptr<Connection>)>;
  // Asked once per request whose body is still to come: an answer refuses it before its body.
  using Screen = std::function<std::optional<EarlyAnswer>(const HeadCheck&)>;
  Reception(ConnectionLimits limits, Serve serve, Screen screen);
  ~Reception();

  // Waits for the connection's next request: `idle` (nothing of it yet) or a head under way.
  void hold(std::shared_ptr<Connection> connection);
  // Closes gracefully without a thread waiting: FIN now, then drain() what the client still sends
  // until its FIN, for at most 500 ms, then close (a close with unread bytes would send RST, which
  // can destroy the answer before the client reads it).
  void linger(std::shared_ptr<Connection> connection);
  void stop();
  std::size_t held() const;

 private:
  void run();
  struct Held {
    std::shared_ptr<Connection> connection;
    Clock::time_point deadline;
    bool receiving_body = false;  // the head is in and screened; deadline is the body's
    bool closing = false;         // answered and shut: draining until the deadline (linger())
    std::size_t reserved = 0;     // of max_receiving_body_bytes, for this body
  };
  // A request's head is in, its body not: screen, reserve, answer 100-continue; or the refusal.
  std::optional<EarlyAnswer> start_body(Held& held, const HeadCheck& head);

  const ConnectionLimits limits_;
  const Serve serve_;
  const Screen screen_;
  std::size_t reserved_ = 0;  // sum of Held::reserved
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  mutable std::mutex mutex_;
  std::map<int, Held> held_;  // by socket
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace linkwise::server
