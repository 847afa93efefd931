// The request-head inspection in front of cpp-httplib (service/server/connection.hpp): what reaches
// a worker, what is refused and with which status.
#include <catch2/catch.hpp>

#include <string>

#include "server/compute_gate.hpp"
#include "server/connection.hpp"

using linkwise::server::ComputeGate;
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
