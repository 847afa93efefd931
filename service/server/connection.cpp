#include "server/connection.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <vector>

#include "server/problem.hpp"

namespace linkwise::server {
namespace {

constexpr std::size_t kReadChunk = 16 * 1024;

bool header_is(std::string_view line, std::string_view name) {
  return line.size() > name.size() && line[name.size()] == ':' &&
         strncasecmp(line.data(), name.data(), name.size()) == 0;
}

std::string_view header_value(std::string_view line, std::size_t name_size) {
  std::string_view value = line.substr(name_size + 1);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  return value;
}

HeadCheck refused(int status, std::string detail) {
  HeadCheck check;
  check.state = HeadCheck::State::refused;
  check.status = status;
  check.detail = std::move(detail);
  return check;
}

// Milliseconds left until `deadline`, at least 0, for poll().
int millis_until(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1 << 30));
}

}  // namespace

HeadCheck inspect_head(std::string_view bytes, const ConnectionLimits& limits) {
  // Blank lines before a request line are allowed (RFC 9112 2.2); skip them.
  std::size_t start = 0;
  while (start + 1 < bytes.size() && bytes[start] == '\r' && bytes[start + 1] == '\n') start += 2;
  const std::size_t end = bytes.find("\r\n\r\n", start);
  if (end == std::string_view::npos) {
    if (bytes.size() > limits.max_head_bytes)
      return refused(431, "the request head is over " + std::to_string(limits.max_head_bytes) + " bytes");
    const auto lines = static_cast<std::size_t>(std::count(bytes.begin(), bytes.end(), '\n'));
    if (lines > limits.max_header_lines)
      return refused(431, "more than " + std::to_string(limits.max_header_lines) + " header lines");
    return {};
  }
  const std::size_t head_bytes = end + 4;
  if (head_bytes > limits.max_head_bytes)
    return refused(431, "the request head is over " + std::to_string(limits.max_head_bytes) + " bytes");

  HeadCheck check;
  check.state = HeadCheck::State::complete;
  check.head_bytes = head_bytes;
  std::string_view head = bytes.substr(start, end - start);
  const std::size_t line_end = head.find("\r\n");
  const std::string_view request_line = head.substr(0, line_end);
  const std::size_t method_end = request_line.find(' ');
  check.method = std::string(request_line.substr(0, method_end));
  if (method_end != std::string_view::npos) {
    const std::string_view after = request_line.substr(method_end + 1);
    check.target = std::string(after.substr(0, after.find(' ')));
  }
  std::size_t lines = 0;
  bool has_length = false;
  std::string_view rest = line_end == std::string_view::npos ? std::string_view() : head.substr(line_end + 2);
  while (!rest.empty()) {
    const std::size_t eol = rest.find("\r\n");
    const std::string_view line = rest.substr(0, eol);
    rest = eol == std::string_view::npos ? std::string_view() : rest.substr(eol + 2);
    if (++lines > limits.max_header_lines)
      return refused(431, "more than " + std::to_string(limits.max_header_lines) + " header lines");
    if (header_is(line, "Content-Length")) {
      const std::string_view value = header_value(line, 14);
      std::size_t length = 0;
      const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), length);
      if (value.empty() || ec != std::errc() || ptr != value.data() + value.size())
        return refused(400,
                       "Content-Length: expected a number of bytes, got \"" + std::string(value.substr(0, 40)) + "\"");
      // Two lengths that differ make the body's end ambiguous (request smuggling): refused.
      if (has_length && length != check.content_length)
        return refused(400, "Content-Length given twice with different values");
      has_length = true;
      check.content_length = length;
    } else if (header_is(line, "Expect")) {
      check.expects_continue = true;
    } else if (header_is(line, "Transfer-Encoding")) {
      check.chunked = true;
    }
  }
  check.has_content_length = has_length;
  // Refused before a byte of it is read: the reception never holds more than the limit for a body.
  if (check.content_length > limits.max_body_bytes)
    return refused(413, "the body is " + std::to_string(check.content_length) + " bytes; at most " +
                            std::to_string(limits.max_body_bytes) + " are accepted");
  return check;
}

// ---------------------------------------------------------------------------------------------

Connection::~Connection() {
  if (sock_ >= 0) ::close(sock_);
}

namespace {
// How many bytes the front request needs in the buffer: its head and body once the head is in, a
// head's limit (+1, to see it outgrown) before. Nothing more is read: a refused head needs no more.
// `known`: whether that is the request's size (its head is in).
std::size_t wanted_bytes(std::string_view buffer, const ConnectionLimits& limits, bool& known) {
  const HeadCheck check = inspect_head(buffer, limits);
  known = check.state == HeadCheck::State::complete;
  switch (check.state) {
    case HeadCheck::State::incomplete: return limits.max_head_bytes + 1;
    case HeadCheck::State::refused: return buffer.size();
    case HeadCheck::State::complete: break;
  }
  return check.head_bytes + (check.chunked ? 0 : check.content_length);
}
}  // namespace

bool Connection::fill_available(const ConnectionLimits& limits) {
  char chunk[kReadChunk];
  while (true) {
    bool known = false;
    const std::size_t limit = wanted_bytes(buffer_, limits, known);
    if (buffer_.size() >= limit) return true;
    // Once the head is in, the request's size is known (and within the limits): one allocation of
    // exactly that, instead of doubling through 16 KiB appends (8 MiB for a 4 MiB body, and a
    // trail of freed steps across the threads' malloc arenas).
    if (known && limit > buffer_.capacity()) buffer_.reserve(limit);
    const ssize_t n = ::recv(sock_, chunk, std::min(sizeof chunk, limit - buffer_.size()), MSG_DONTWAIT);
    if (n > 0) {
      buffer_.append(chunk, static_cast<std::size_t>(n));
      continue;
    }
    if (n == 0) return false;  // EOF
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK;
  }
}

bool Connection::ready(const ConnectionLimits& limits) const {
  const HeadCheck check = inspect_head(buffer_, limits);
  if (check.state == HeadCheck::State::refused) return true;
  if (check.state == HeadCheck::State::incomplete) return false;
  if (check.chunked) return true;  // refused 411 (Server::pre_route) without reading the body
  return buffer_.size() >= check.head_bytes + check.content_length;
}

bool Connection::send_continue() {
  static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
  const ssize_t n = ::send(sock_, kContinue.data(), kContinue.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  if (n != static_cast<ssize_t>(kContinue.size())) return false;
  // Drop every Expect line from the buffered head (it is complete: the caller checked): a second
  // one left in made cpp-httplib send a second "100 Continue" once the body was in.
  for (std::size_t line = buffer_.find("\r\n"); line < buffer_.find("\r\n\r\n");) {
    const std::size_t start = line + 2, end = buffer_.find("\r\n", start);
    if (header_is(std::string_view(buffer_).substr(start, end - start), "Expect"))
      buffer_.erase(start, end + 2 - start);
    else line = end;
  }
  return true;
}

bool Connection::drop_header(std::string_view name) {
  const std::size_t head_end = buffer_.find("\r\n\r\n", read_pos_);
  if (head_end == std::string::npos) return false;
  bool dropped = false;
  std::size_t end_of_head = head_end;
  for (std::size_t line = buffer_.find("\r\n", read_pos_); line < end_of_head;) {
    const std::size_t start = line + 2, end = buffer_.find("\r\n", start);
    if (header_is(std::string_view(buffer_).substr(start, end - start), name)) {
      buffer_.erase(start, end + 2 - start);
      end_of_head -= end + 2 - start;
      dropped = true;
    } else {
      line = end;
    }
  }
  return dropped;
}

bool Connection::peer_closed() const {
  // POLLHUP/POLLERR only (a reset, or a failed write): see the header for why a FIN is not enough.
  pollfd p{sock_, 0, 0};
  return sock_ < 0 || (::poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR)));
}

void Connection::release_spent() {
  if (request_left_ == 0 && buffer_.capacity() > 64 * 1024) buffer_.shrink_to_fit();
}

void Connection::begin_request(std::size_t request_bytes, Clock::time_point deadline) {
  request_left_ = request_bytes;
  deadline_ = deadline;
}

bool Connection::skip_unread_body() {
  char sink[kReadChunk];
  while (request_left_ > 0) {
    if (read(sink, std::min(sizeof sink, request_left_)) <= 0) return false;
  }
  return true;
}

bool Connection::is_readable() const {
  if (read_pos_ < buffer_.size()) return true;
  pollfd p{sock_, POLLIN, 0};
  return ::poll(&p, 1, millis_until(deadline_)) > 0;
}

bool Connection::is_writable() const {
  pollfd p{sock_, POLLOUT, 0};
  return ::poll(&p, 1, 10'000) > 0 && !(p.revents & (POLLERR | POLLHUP));
}

ssize_t Connection::read(char* ptr, std::size_t size) {
  // The stream ends with the request (head + Content-Length): cpp-httplib reads a POST, PUT, PATCH
  // or DELETE without Content-Length "until the connection closes", which held a worker for the
  // whole body deadline; here that body is empty at once (and POST/PUT/PATCH get 411 before).
  if (size == 0 || request_left_ == 0) return 0;
  size = std::min(size, request_left_);
  if (read_pos_ == buffer_.size()) {
    // Wait within the request's deadline: a slow body is cut off, never waited for forever.
    pollfd p{sock_, POLLIN, 0};
    while (true) {
      const int ready = ::poll(&p, 1, millis_until(deadline_));
      if (ready > 0) break;
      if (ready < 0 && errno == EINTR) continue;
      return -1;
    }
    char chunk[kReadChunk];
    const ssize_t n = ::recv(sock_, chunk, sizeof chunk, 0);
    if (n <= 0) return -1;
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
  const std::size_t n = std::min(size, buffer_.size() - read_pos_);
  std::copy_n(buffer_.data() + read_pos_, n, ptr);
  // Consumed by moving an offset: cpp-httplib reads the head a byte at a time, and erasing each
  // byte off the front moved the whole buffered body (up to 4 MiB) every time. The buffer is
  // compacted once, when the request is consumed, so what follows it (pipelined) starts at 0.
  read_pos_ += n;
  request_left_ -= std::min(request_left_, n);
  if (request_left_ == 0 || read_pos_ == buffer_.size()) {
    buffer_.erase(0, read_pos_);
    read_pos_ = 0;
  }
  return static_cast<ssize_t>(n);
}

ssize_t Connection::write(const char* ptr, std::size_t size) {
  std::size_t sent = 0;
  while (sent < size) {
    if (!is_writable()) return -1;
    const ssize_t n = ::send(sock_, ptr + sent, size - sent, MSG_NOSIGNAL);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return -1;
    sent += static_cast<std::size_t>(n);
  }
  return static_cast<ssize_t>(size);
}

namespace {
void address_of(const sockaddr_storage& address, std::string& ip, int& port) {
  char text[INET6_ADDRSTRLEN] = "";
  if (address.ss_family == AF_INET) {
    const auto& v4 = reinterpret_cast<const sockaddr_in&>(address);
    inet_ntop(AF_INET, &v4.sin_addr, text, sizeof text);
    port = ntohs(v4.sin_port);
  } else if (address.ss_family == AF_INET6) {
    const auto& v6 = reinterpret_cast<const sockaddr_in6&>(address);
    inet_ntop(AF_INET6, &v6.sin6_addr, text, sizeof text);
    port = ntohs(v6.sin6_port);
  }
  ip = text;
}
}  // namespace

void Connection::get_remote_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage address{};
  socklen_t size = sizeof address;
  if (::getpeername(sock_, reinterpret_cast<sockaddr*>(&address), &size) == 0) address_of(address, ip, port);
}

void Connection::get_local_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage address{};
  socklen_t size = sizeof address;
  if (::getsockname(sock_, reinterpret_cast<sockaddr*>(&address), &size) == 0) address_of(address, ip, port);
}

void Connection::answer_and_shut(const Problem& problem, const std::string& extra_headers) {
  // The one problem renderer (problem.cpp), so these answers look like every other error.
  httplib::Response res;
  write_problem(res, problem, "");
  const std::string response = "HTTP/1.1 " + std::to_string(problem.status) + " " + problem.title +
                               "\r\nContent-Type: " + res.get_header_value("Content-Type") +
                               "\r\nContent-Length: " + std::to_string(res.body.size()) + "\r\n" + extra_headers +
                               "Connection: close\r\n\r\n" + res.body;
  // Without waiting: this runs on the reception thread too, which must never block on one client.
  (void)::send(sock_, response.data(), response.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  shut_write();
}

void Connection::shut_write() {
  if (sock_ >= 0) ::shutdown(sock_, SHUT_WR);
}

bool Connection::drain() {
  char sink[kReadChunk];
  while (drained_ < (8u << 20)) {
    const ssize_t n = ::recv(sock_, sink, sizeof sink, MSG_DONTWAIT);
    if (n > 0) {
      drained_ += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);  // else FIN (0) or an error: done
  }
  return false;
}

namespace {
thread_local const Connection* serving = nullptr;  // the connection this worker thread serves
}  // namespace

Connection::Serving::Serving(const Connection& c) { serving = &c; }
Connection::Serving::~Serving() { serving = nullptr; }

bool current_client_gone() { return serving != nullptr && serving->peer_closed(); }

// ---------------------------------------------------------------------------------------------

Reception::Reception(ConnectionLimits limits, Serve serve, Screen screen)
    : limits_(limits), serve_(std::move(serve)), screen_(std::move(screen)) {
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  epoll_event wake{};
  wake.events = EPOLLIN;
  wake.data.fd = wake_fd_;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &wake);
  thread_ = std::thread([this] { run(); });
}

Reception::~Reception() {
  stop();
  if (thread_.joinable()) thread_.join();
  ::close(epoll_fd_);
  ::close(wake_fd_);
}

void Reception::hold(std::shared_ptr<Connection> connection) {
  std::optional<EarlyAnswer> refusal;
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;  // the connection closes as it is destroyed here
    const int fd = connection->fd();
    const auto wait = connection->empty() ? limits_.idle_timeout : limits_.head_timeout;
    Held held{connection, Clock::now() + wait};
    // The head may have come with the request's first bytes: its body is awaited from now on.
    if (const HeadCheck head = connection->head(limits_); head.state == HeadCheck::State::complete)
      refusal = start_body(held, head);
    if (!refusal) {
      held_[fd] = std::move(held);
      epoll_event event{};
      event.events = EPOLLIN | EPOLLRDHUP;
      event.data.fd = fd;
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event);
      return;
    }
  }
  // hold() runs on a worker thread (after accept, or after a request): answer here, without waiting.
  connection->answer_and_shut(problem_for_status(refusal->status, refusal->detail), refusal->headers);
  linger(std::move(connection));
}

void Reception::linger(std::shared_ptr<Connection> connection) {
  connection->shut_write();
  std::lock_guard lock(mutex_);
  if (stopping_) return;  // closes as it is destroyed here
  const int fd = connection->fd();
  Held held{std::move(connection), Clock::now() + std::chrono::milliseconds(500)};
  held.closing = true;
  held_[fd] = std::move(held);
  epoll_event event{};
  event.events = EPOLLIN | EPOLLRDHUP;
  event.data.fd = fd;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event);
}

std::optional<EarlyAnswer> Reception::start_body(Held& held, const HeadCheck& head) {
  if (screen_) {
    if (auto early = screen_(head)) return early;
  }
  if (reserved_ + head.content_length > limits_.max_receiving_body_bytes)
    return EarlyAnswer{503, "too many request bodies are arriving at once; retry after a second", "Retry-After: 1\r\n"};
  reserved_ += head.content_length;
  held.reserved = head.content_length;
  held.receiving_body = true;
  held.deadline = Clock::now() + limits_.body_timeout;
  // The client waits for this before it sends the body. Sent without waiting (under the lock): a
  // client whose socket cannot take 25 bytes has not read its earlier answers; it is cut off, and
  // the reset shows as EOF at the next event.
  if (head.expects_continue && !held.connection->send_continue()) ::shutdown(held.connection->fd(), SHUT_RDWR);
  return std::nullopt;
}

void Reception::stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  const std::uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof one);
  // Synchronous: the connections it hands over are in the worker queue before the caller shuts
  // the workers down (which finishes what is queued).
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

std::size_t Reception::held() const {
  std::lock_guard lock(mutex_);
  return held_.size();
}

void Reception::run() {
  std::vector<epoll_event> events(64);
  while (true) {
    const int n = ::epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()), 200);
    std::vector<std::shared_ptr<Connection>> ready, expired, closed;  // closed: destroyed after the lock
    std::vector<std::pair<std::shared_ptr<Connection>, EarlyAnswer>> refused;
    {
      std::lock_guard lock(mutex_);
      if (stopping_) {
        // Connections idle between requests close; one whose request has begun is served (its
        // body within the body deadline), so a request in flight at SIGTERM still gets its answer.
        for (auto& [fd, held] : held_) {
          ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
          if (!held.closing && !held.connection->empty()) ready.push_back(std::move(held.connection));
        }
        held_.clear();
        reserved_ = 0;
      }
      const auto release = [&](std::map<int, Held>::iterator it, std::vector<std::shared_ptr<Connection>>& into) {
        ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, it->first, nullptr);
        reserved_ -= it->second.reserved;
        into.push_back(std::move(it->second.connection));
        held_.erase(it);
      };
      for (int i = 0; i < n; ++i) {
        const auto it = held_.find(events[static_cast<std::size_t>(i)].data.fd);
        if (it == held_.end()) continue;  // the wake-up eventfd
        Connection& c = *it->second.connection;
        if (it->second.closing) {
          if (!c.drain()) release(it, closed);
          continue;
        }
        const bool open = c.fill_available(limits_);
        if (c.ready(limits_)) release(it, ready);
        else if (!open) release(it, closed);
        else if (!it->second.receiving_body) {
          // The head is in, the body is not: a worker takes the request only once it is.
          if (const HeadCheck head = c.head(limits_); head.state == HeadCheck::State::complete) {
            if (auto refusal = start_body(it->second, head)) {
              auto connection = it->second.connection;
              std::vector<std::shared_ptr<Connection>> sink;
              release(it, sink);
              refused.emplace_back(std::move(connection), std::move(*refusal));
            }
          }
        }
      }
      const auto now = Clock::now();
      for (auto it = held_.begin(); it != held_.end();) {
        const auto next = std::next(it);
        if (it->second.deadline <= now) release(it, it->second.closing ? closed : expired);
        it = next;
      }
    }
    closed.clear();
    for (auto& c : ready) serve_(std::move(c));
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
    }
    // Refused before their body (404, 405, 503), or cut off at their deadline (408): answered here
    // without waiting, then closing in this loop (linger()), so no thread waits on these clients.
    for (auto& [c, answer] : refused) {
      c->answer_and_shut(problem_for_status(answer.status, answer.detail), answer.headers);
      linger(std::move(c));
    }
    for (auto& c : expired) {
      // Idle keep-alive connections just close; a request cut off mid-head or mid-body gets its 408.
      if (c->empty()) continue;
      const bool body = c->head(limits_).state == HeadCheck::State::complete;
      c->answer_and_shut(problem_for_status(
          408, body ? "the request body did not arrive in time (its Content-Length is more than was sent)"
                    : "the request head did not arrive in time"));
      linger(std::move(c));
    }
  }
}

}  // namespace linkwise::server
