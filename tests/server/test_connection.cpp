// The request-head inspection in front of cpp-httplib (service/server/connection.hpp): what reaches
// a worker, what is refused and with which status.
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "server/compute_gate.hpp"
#include "server/connection.hpp"

using linkwise::server::ComputeGate;
using linkwise::server::Connection;
using linkwise::server::ConnectionLimits;
using linkwise::server::GateFull;
using linkwise::server::HeadCheck;
using linkwise::server::inspect_head;

namespace {
const ConnectionLimits kLimits{};
}

TEST_CASE("a complete head gives its method, size and body length", "[server][connection]") {
  const std::string head = "POST /v1/plans HTTP/1.1\r\nHost: x\r\nContent-Length: 17\r\n\r\n";
  const HeadCheck check = inspect_head(head + "{\"model\": {}}...", kLimits);
  REQUIRE(check.state == HeadCheck::State::complete);
  CHECK(check.method == "POST");
  CHECK(check.head_bytes == head.size());
  CHECK(check.content_length == 17);
  CHECK_FALSE(check.expects_continue);
}

TEST_CASE("a head still arriving is incomplete until it outgrows the limits", "[server][connection]") {
  CHECK(inspect_head("GET /healthz HTTP/1.1\r\nHost", kLimits).state == HeadCheck::State::incomplete);
  CHECK(inspect_head("", kLimits).state == HeadCheck::State::incomplete);
  // Without its blank line yet, but already too large or too many lines: refused at once.
  const HeadCheck big = inspect_head("GET / HTTP/1.1\r\nX: " + std::string(20000, 'a'), kLimits);
  CHECK(big.state == HeadCheck::State::refused);
  CHECK(big.status == 431);
  std::string many = "GET / HTTP/1.1\r\n";
  for (int i = 0; i < 150; ++i) many += "X-A: b\r\n";
  const HeadCheck lines = inspect_head(many, kLimits);
  CHECK(lines.state == HeadCheck::State::refused);
  CHECK(lines.status == 431);
}

TEST_CASE("conflicting or malformed Content-Length is refused, equal repeats are not", "[server][connection]") {
  const auto with = [](const std::string& headers) {
    return inspect_head("POST /v1/plans HTTP/1.1\r\n" + headers + "\r\n", kLimits);
  };
  CHECK(with("Content-Length: 5\r\nContent-Length: 6\r\n").status == 400);
  CHECK(with("Content-Length: five\r\n").status == 400);
  CHECK(with("Content-Length: -1\r\n").status == 400);
  CHECK(with("Content-Length: 99999999999999999999999\r\n").status == 400);
  const HeadCheck same = with("Content-Length: 5\r\ncontent-length: 5\r\n");
  CHECK(same.state == HeadCheck::State::complete);
  CHECK(same.content_length == 5);
  CHECK(with("Expect: 100-continue\r\nContent-Length: 5\r\n").expects_continue);
}

TEST_CASE("blank lines before the request line are skipped", "[server][connection]") {
  const HeadCheck check = inspect_head("\r\n\r\nGET /healthz HTTP/1.1\r\n\r\n", kLimits);
  REQUIRE(check.state == HeadCheck::State::complete);
  CHECK(check.method == "GET");
}

TEST_CASE("the planner gate refuses beyond its queue bound", "[server][gate]") {
  ComputeGate gate(1, 0);  // one slot, nobody may wait
  ComputeGate::Pass first(gate);
  CHECK_THROWS_AS(ComputeGate::Pass(gate), GateFull);
}

TEST_CASE("a complete head gives its target and framing, a body over the limit is refused at once",
          "[server][connection]") {
  const HeadCheck check =
      inspect_head("PUT /v1/plans?top=3 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", kLimits);
  REQUIRE(check.state == HeadCheck::State::complete);
  CHECK(check.target == "/v1/plans?top=3");
  CHECK(check.chunked);
  CHECK_FALSE(check.has_content_length);
  ConnectionLimits small;
  small.max_body_bytes = 10;
  const HeadCheck big = inspect_head("POST /v1/plans HTTP/1.1\r\nContent-Length: 11\r\n\r\n", small);
  CHECK(big.state == HeadCheck::State::refused);
  CHECK(big.status == 413);
  CHECK(inspect_head("POST /v1/plans HTTP/1.1\r\nContent-Length: 10\r\n\r\n", small).state ==
        HeadCheck::State::complete);
}

namespace {
// A connection on one end of a socket pair, the test playing the client on the other.
struct Pair {
  int client = -1;
  std::unique_ptr<Connection> server;
  Pair() {
    int fds[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
    client = fds[0];
    server = std::make_unique<Connection>(fds[1]);
  }
  ~Pair() {
    if (client >= 0) ::close(client);
  }
  void send(const std::string& bytes) const {
    REQUIRE(::write(client, bytes.data(), bytes.size()) == ssize_t(bytes.size()));
  }
};
}  // namespace

TEST_CASE("a worker takes a request only once its whole body is in", "[server][connection]") {
  // Before, the head and the first 64 KiB were enough, and the worker then waited for the rest:
  // clients that stopped short held every worker for the body deadline.
  Pair p;
  const std::string head = "POST /v1/plans HTTP/1.1\r\nContent-Length: 100000\r\n\r\n";
  p.send(head + std::string(70000, ' '));
  REQUIRE(p.server->fill_available(kLimits));
  CHECK_FALSE(p.server->ready(kLimits));
  p.send(std::string(30000, ' '));
  REQUIRE(p.server->fill_available(kLimits));
  CHECK(p.server->ready(kLimits));
}

TEST_CASE("a request's stream ends with its Content-Length: no wait for bytes never announced",
          "[server][connection]") {
  // cpp-httplib reads a DELETE (or POST) without Content-Length until the connection closes.
  Pair p;
  const std::string head = "DELETE /v1/keys/1 HTTP/1.1\r\nHost: x\r\n\r\n";
  p.send(head);
  REQUIRE(p.server->fill_available(kLimits));
  REQUIRE(p.server->ready(kLimits));
  p.server->begin_request(head.size(), std::chrono::steady_clock::now() + std::chrono::seconds(30));
  std::string read(head.size(), '\0');
  std::size_t got = 0;
  while (got < head.size()) {
    const ssize_t n = p.server->read(read.data() + got, head.size() - got);
    REQUIRE(n > 0);
    got += static_cast<std::size_t>(n);
  }
  CHECK(read == head);
  char byte = 0;
  const auto start = std::chrono::steady_clock::now();
  CHECK(p.server->read(&byte, 1) == 0);  // end of this request's stream, at once
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
}

TEST_CASE("100-continue is answered once and the Expect line leaves the buffered head", "[server][connection]") {
  Pair p;
  p.send("POST /v1/plans HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n");
  REQUIRE(p.server->fill_available(kLimits));
  CHECK(p.server->head(kLimits).expects_continue);
  CHECK_FALSE(p.server->ready(kLimits));
  REQUIRE(p.server->send_continue());
  char reply[64] = {};
  const ssize_t n = ::recv(p.client, reply, sizeof reply, 0);
  CHECK(std::string(reply, static_cast<std::size_t>(std::max<ssize_t>(n, 0))) == "HTTP/1.1 100 Continue\r\n\r\n");
  const HeadCheck after = p.server->head(kLimits);
  REQUIRE(after.state == HeadCheck::State::complete);
  CHECK_FALSE(after.expects_continue);
  CHECK(after.content_length == 2);
}

TEST_CASE("a client that half-closed still waits for its answer, one whose socket is gone does not",
          "[server][connection]") {
  Pair p;
  CHECK_FALSE(p.server->peer_closed());
  // `nc -N`: no more to send, still reading. Before, its FIN counted as gone (the search dropped).
  ::shutdown(p.client, SHUT_WR);
  CHECK_FALSE(p.server->peer_closed());
  ::close(p.client);  // a Unix socket's peer gone shows as POLLHUP, as a TCP reset does
  p.client = -1;
  CHECK(p.server->peer_closed());
}

TEST_CASE("two Expect lines get one 100 Continue: both leave the buffered head", "[server][connection]") {
  Pair p;
  p.send("POST /v1/plans HTTP/1.1\r\nExpect: 100-continue\r\nHost: x\r\nExpect: 100-continue\r\n"
         "Content-Length: 2\r\n\r\n");
  REQUIRE(p.server->fill_available(kLimits));
  REQUIRE(p.server->send_continue());
  const HeadCheck after = p.server->head(kLimits);
  REQUIRE(after.state == HeadCheck::State::complete);
  CHECK_FALSE(after.expects_continue);  // cpp-httplib would have sent a second 100 for the other
  CHECK(after.content_length == 2);
}

TEST_CASE("drain drops what the client sends until its FIN, without waiting", "[server][connection]") {
  Pair p;
  p.send("leftover body bytes");
  CHECK(p.server->drain());  // dropped; the client may send more
  const auto start = std::chrono::steady_clock::now();
  CHECK(p.server->drain());  // nothing there: returns at once
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
  ::shutdown(p.client, SHUT_WR);
  CHECK_FALSE(p.server->drain());  // its FIN: done, close now
}

TEST_CASE("a lingering close waits on no thread and ends at the client's FIN or after 500 ms", "[server][connection]") {
  linkwise::server::Reception reception(
      kLimits, [](std::shared_ptr<Connection>) {}, nullptr);
  const auto held_within = [&](std::size_t count, std::chrono::seconds bound) {
    const auto until = std::chrono::steady_clock::now() + bound;
    while (reception.held() != count && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return reception.held() == count;
  };
  int silent[2], leaving[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, silent) == 0);
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, leaving) == 0);
  // Before, the caller (the reception thread, or a worker) itself waited up to 500 ms per client.
  const auto start = std::chrono::steady_clock::now();
  reception.linger(std::make_shared<Connection>(silent[1]));
  reception.linger(std::make_shared<Connection>(leaving[1]));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::milliseconds(100));
  CHECK(reception.held() == 2);
  char byte = 0;
  CHECK(::recv(leaving[0], &byte, 1, 0) == 0);  // the server's FIN came at once
  ::shutdown(leaving[0], SHUT_WR);              // the client's FIN: that one closes
  CHECK(held_within(1, std::chrono::seconds(5)));
  CHECK(held_within(0, std::chrono::seconds(5)));  // the silent one, at its deadline
  ::close(silent[0]);
  ::close(leaving[0]);
}
