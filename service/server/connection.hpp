// The service's connection handling, in front of cpp-httplib's request parser. cpp-httplib gives
// each connection a worker thread from accept to close and trusts the client's pace and size, so
// 64 clients sending one byte every 2 s held every worker, and a head of 2 million header lines
// grew the process by 600 MB. Here a connection reaches a worker only once its request head (and
// the start of its body) has arrived in full:
//   - Reception: one epoll thread holds connections while their next request arrives, with a
//     deadline (408 on a partial head, a silent close for an idle keep-alive connection), and
//     refuses oversized heads (431), too many header lines (431) and conflicting or malformed
//     Content-Length (400) before any worker sees them.
//   - Connection: the httplib::Stream a worker reads the request through, buffered and with a
//     deadline for the body; after the answer it skips any body cpp-httplib left unread (a GET with
//     a body), so pipelined requests are answered in order, and it closes gracefully (FIN, then
//     drain) so an answer is never lost to a connection reset.
#pragma once

#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace linkwise::server {

struct Problem;

using Clock = std::chrono::steady_clock;

struct ConnectionLimits {
  std::size_t max_head_bytes = 16 * 1024;  // request line + headers
  std::size_t max_header_lines = 100;
  std::chrono::milliseconds head_timeout{10'000};  // from waiting for a request to its complete head
  std::chrono::milliseconds body_timeout{10'000};  // from the complete head to the whole body
  std::chrono::milliseconds idle_timeout{2'000};   // keep-alive: no byte of a next request
  std::size_t body_prefetch_bytes = 64 * 1024;     // body bytes that must be in before a worker takes it
};

// What the front of a connection's buffer holds: a request head still arriving, a complete one
// (with its method and body length), or one refused with a status and a reason.
struct HeadCheck {
  enum class State { incomplete, complete, refused } state = State::incomplete;
  int status = 0;                  // refused: 400 or 431
  std::string detail;              // refused: why, for the problem body
  std::string method;              // complete
  std::size_t head_bytes = 0;      // complete: request line + headers + the blank line
  std::size_t content_length = 0;  // complete: 0 without Content-Length
  bool expects_continue = false;   // complete: "Expect: 100-continue" (the body waits for us)
};

// Pure: inspects the bytes at the front of a connection. Tested and fuzzed without a socket.
HeadCheck inspect_head(std::string_view bytes, const ConnectionLimits& limits);

// One client connection: its socket and the bytes read from it that no request has consumed yet.
class Connection final : public httplib::Stream {
 public:
  explicit Connection(int sock) : sock_(sock) {}
  ~Connection() override;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Reads what the socket has now, without waiting, up to `limit` buffered bytes. False on EOF or error.
  bool fill_available(std::size_t limit);
  // Whether a worker can take the next request: its head is complete or refused, and the body's
  // first bytes are in.
  bool ready(const ConnectionLimits& limits) const;
  HeadCheck head(const ConnectionLimits& limits) const { return inspect_head(buffer_, limits); }
  bool empty() const { return buffer_.empty(); }

  // Starts a request of `request_bytes` (head + body) that must be read by `deadline`.
  void begin_request(std::size_t request_bytes, Clock::time_point deadline);
  // Skips what the handler left unread of the request's body. False when it did not arrive in time.
  bool skip_unread_body();
  // Answers a refused head or a timeout with its problem+json and closes.
  void answer_and_close(const Problem& problem);
  // FIN first, then read and drop what the client still sends for a moment, then close: a close
  // with unread bytes would send RST, which can destroy the answer before the client reads it.
  void close_gracefully();
  int fd() const { return sock_; }

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
  std::string buffer_;            // read from the socket, not yet consumed
  std::size_t request_left_ = 0;  // bytes of the current request not yet consumed
  Clock::time_point deadline_{};
};

// Holds connections between requests (see the top of this file) and hands each to `serve` on the
// worker pool once ready(). One thread; stop() closes every connection it holds.
class Reception {
 public:
  using Serve = std::function<void(std::shared_ptr<Connection>)>;
  Reception(ConnectionLimits limits, Serve serve);
  ~Reception();

  // Waits for the connection's next request: `idle` (nothing of it yet) or a head under way.
  void hold(std::shared_ptr<Connection> connection);
  void stop();
  std::size_t held() const;

 private:
  void run();
  struct Held {
    std::shared_ptr<Connection> connection;
    Clock::time_point deadline;
  };

  const ConnectionLimits limits_;
  const Serve serve_;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  mutable std::mutex mutex_;
  std::map<int, Held> held_;  // by socket
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace linkwise::server
