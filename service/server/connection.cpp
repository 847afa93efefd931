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
  check.method = std::string(request_line.substr(0, request_line.find(' ')));
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
    }
  }
  return check;
}

// ---------------------------------------------------------------------------------------------

Connection::~Connection() {
  if (sock_ >= 0) ::close(sock_);
}

bool Connection::fill_available(std::size_t limit) {
  char chunk[kReadChunk];
  while (buffer_.size() < limit) {
    const ssize_t n = ::recv(sock_, chunk, std::min(sizeof chunk, limit - buffer_.size()), MSG_DONTWAIT);
    if (n > 0) {
      buffer_.append(chunk, static_cast<std::size_t>(n));
      continue;
    }
    if (n == 0) return false;  // EOF
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK;
  }
  return true;
}

bool Connection::ready(const ConnectionLimits& limits) const {
  const HeadCheck check = inspect_head(buffer_, limits);
  if (check.state == HeadCheck::State::refused) return true;
  if (check.state == HeadCheck::State::incomplete) return false;
  if (check.expects_continue) return true;  // the client sends its body after our 100 Continue
  const std::size_t wanted = check.head_bytes + std::min(check.content_length, limits.body_prefetch_bytes);
  return buffer_.size() >= wanted;
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
  if (!buffer_.empty()) return true;
  pollfd p{sock_, POLLIN, 0};
  return ::poll(&p, 1, millis_until(deadline_)) > 0;
}

bool Connection::is_writable() const {
  pollfd p{sock_, POLLOUT, 0};
  return ::poll(&p, 1, 10'000) > 0 && !(p.revents & (POLLERR | POLLHUP));
}

ssize_t Connection::read(char* ptr, std::size_t size) {
  if (size == 0) return 0;
  if (buffer_.empty()) {
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
  const std::size_t n = std::min(size, buffer_.size());
  std::copy_n(buffer_.data(), n, ptr);
  buffer_.erase(0, n);
  request_left_ -= std::min(request_left_, n);
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

void Connection::answer_and_close(const Problem& problem) {
  // The one problem renderer (problem.cpp), so these answers look like every other error.
  httplib::Response res;
  write_problem(res, problem, "");
  const std::string response = "HTTP/1.1 " + std::to_string(problem.status) + " " + problem.title +
                               "\r\nContent-Type: " + res.get_header_value("Content-Type") +
                               "\r\nContent-Length: " + std::to_string(res.body.size()) +
                               "\r\nConnection: close\r\n\r\n" + res.body;
  write(response.data(), response.size());
  close_gracefully();
}

void Connection::close_gracefully() {
  if (sock_ < 0) return;
  ::shutdown(sock_, SHUT_WR);
  // Drop what the client still sends (at most 1 MiB, for at most half a second), until its FIN.
  const auto until = Clock::now() + std::chrono::milliseconds(500);
  char sink[kReadChunk];
  std::size_t dropped = 0;
  while (dropped < (1u << 20)) {
    pollfd p{sock_, POLLIN, 0};
    if (::poll(&p, 1, millis_until(until)) <= 0) break;
    const ssize_t n = ::recv(sock_, sink, sizeof sink, 0);
    if (n <= 0) break;
    dropped += static_cast<std::size_t>(n);
  }
  ::close(sock_);
  sock_ = -1;
}

// ---------------------------------------------------------------------------------------------

Reception::Reception(ConnectionLimits limits, Serve serve) : limits_(limits), serve_(std::move(serve)) {
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
  std::lock_guard lock(mutex_);
  if (stopping_) return;  // the connection closes as it is destroyed here
  const int fd = connection->fd();
  const auto wait = connection->empty() ? limits_.idle_timeout : limits_.head_timeout;
  held_[fd] = Held{std::move(connection), Clock::now() + wait};
  epoll_event event{};
  event.events = EPOLLIN | EPOLLRDHUP;
  event.data.fd = fd;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event);
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
    std::vector<std::shared_ptr<Connection>> ready, expired, closed;
    {
      std::lock_guard lock(mutex_);
      if (stopping_) {
        // Connections idle between requests close; one whose request has begun is served (its
        // body within the body deadline), so a request in flight at SIGTERM still gets its answer.
        for (auto& [fd, held] : held_) {
          ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
          if (!held.connection->empty()) ready.push_back(std::move(held.connection));
        }
        held_.clear();
      }
      const auto release = [&](std::map<int, Held>::iterator it, std::vector<std::shared_ptr<Connection>>& into) {
        ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, it->first, nullptr);
        into.push_back(std::move(it->second.connection));
        held_.erase(it);
      };
      for (int i = 0; i < n; ++i) {
        const auto it = held_.find(events[static_cast<std::size_t>(i)].data.fd);
        if (it == held_.end()) continue;  // the wake-up eventfd
        Connection& c = *it->second.connection;
        // Read at most a head's limit plus the body prefetch: beyond that ready() is true anyway.
        const bool open = c.fill_available(limits_.max_head_bytes + limits_.body_prefetch_bytes + 1);
        if (c.ready(limits_)) release(it, ready);
        else if (!open) release(it, closed);
      }
      const auto now = Clock::now();
      for (auto it = held_.begin(); it != held_.end();) {
        const auto next = std::next(it);
        if (it->second.deadline <= now) release(it, expired);
        it = next;
      }
    }
    for (auto& c : ready) serve_(std::move(c));
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
    }
    for (auto& c : expired) {
      // Idle keep-alive connections just close; a request cut off mid-head gets its 408.
      if (c->empty()) continue;
      c->answer_and_close(problem_for_status(408, "the request head did not arrive in time"));
    }
  }
}

}  // namespace linkwise::server
