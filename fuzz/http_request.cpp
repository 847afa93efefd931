// Fuzz target: one HTTP request through the REST service without a socket. The input is the
// request as sent (request line, header lines, an empty line, the body); it is split the way
// cpp-httplib splits it (path decoded, query parsed into params) and answered by Server::handle:
// the pre-routing checks, the Router and every handler, over the embedded catalog and an in-memory
// SQLite database holding one API key and one stored probe report. "$KEY" in a header value is
// replaced by that key, so authenticated uploads are reached.
// A 5xx answer (other than 503), an exception escaping the server, a crash or a JSON answer that
// does not parse is a finding.
#include <httplib.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "linkwise/catalog_db.hpp"
#include "linkwise/error.hpp"
#include "linkwise/probe_report.hpp"
#include "server/context.hpp"
#include "server/database.hpp"
#include "server/server.hpp"

namespace {

using namespace linkwise;

struct Service {
  server::Database db{":memory:"};
  server::Context ctx{Catalog::embedded(), db};
  server::Server server{ctx, [] {
                          server::ServerOptions options;
                          options.access_log = false;
                          return options;
                        }()};
  std::string key = ctx.keys.create("fuzz");

  Service() {
#ifdef LINKWISE_FUZZ_SEED_REPORT
    // One stored report (id 1), so ?probe_report=1, /v1/probe-reports/1 and validation reads find it.
    std::ifstream in(LINKWISE_FUZZ_SEED_REPORT, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    const nlohmann::json report = nlohmann::json::parse(text.str());
    const std::string instance = "aws:p5.48xlarge";
    ctx.reports.add(instance, "fuzz", report, probe::validate_json(probe::parse_report(report), ctx.catalog, instance));
#endif
  }
};

std::string_view next_line(std::string_view& rest) {
  const auto newline = rest.find('\n');
  std::string_view line = rest.substr(0, newline);
  rest = newline == std::string_view::npos ? std::string_view() : rest.substr(newline + 1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

// Parses the request as cpp-httplib 0.11 does; nullopt where it would answer 400 itself.
std::optional<httplib::Request> parse_request(std::string_view input, const std::string& key) {
  httplib::Request req;
  const std::string_view line = next_line(input);
  const auto space = line.find(' ');
  if (space == std::string_view::npos || space == 0) return std::nullopt;
  req.method = std::string(line.substr(0, space));
  std::string_view target = line.substr(space + 1);
  if (const auto version = target.find(' '); version != std::string_view::npos) {
    if (target.substr(version + 1) != "HTTP/1.1" && target.substr(version + 1) != "HTTP/1.0") return std::nullopt;
    target = target.substr(0, version);
  }
  if (target.empty()) return std::nullopt;
  req.target = std::string(target);
  const auto question = target.find('?');
  req.path = httplib::detail::decode_url(std::string(target.substr(0, question)), false);
  if (question != std::string_view::npos) {
    const std::string_view query = target.substr(question + 1);
    if (query.find('?') != std::string_view::npos) return std::nullopt;  // cpp-httplib refuses two '?'
    if (!query.empty()) httplib::detail::parse_query_text(std::string(query), req.params);
  }
  while (!input.empty()) {
    const std::string_view header = next_line(input);
    if (header.empty()) break;
    const auto colon = header.find(':');
    if (colon == std::string_view::npos || colon == 0) return std::nullopt;
    std::string_view value = header.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
    std::string text(value);
    if (const auto at = text.find("$KEY"); at != std::string::npos) text.replace(at, 4, key);
    req.headers.emplace(std::string(header.substr(0, colon)), std::move(text));
  }
  req.body = std::string(input);
  return req;
}

std::string body_of(httplib::Response& res) {
  if (!res.content_provider_) return res.body;
  std::string out;
  httplib::DataSink sink;
  sink.write = [&out](const char* data, std::size_t length) {
    out.append(data, length);
    return true;
  };
  sink.is_writable = [] { return true; };
  if (!res.content_provider_(0, res.content_length_, sink)) fuzz::finding("a content provider failed");
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Service service;
  auto req = parse_request(std::string_view(reinterpret_cast<const char*>(data), size), service.key);
  if (!req) return 0;
  httplib::Response res;
  try {
    service.server.handle(*req, res);
  } catch (const std::exception& e) {
    fuzz::finding(std::string("an exception escaped the server: ") + e.what());
  } catch (...) {
    fuzz::finding("a non-standard exception escaped the server");
  }
  const std::string body = body_of(res);
  static const bool verbose = std::getenv("LINKWISE_FUZZ_VERBOSE") != nullptr;  // one line per request
  if (verbose)
    std::fprintf(stderr, "%d %s %s: %.160s\n", res.status, req->method.c_str(), req->target.substr(0, 80).c_str(),
                 body.c_str());
  if (res.status >= 500 && res.status != 503) {
    fuzz::finding("status " + std::to_string(res.status) + " for " + req->method + " " + req->target + ": " + body);
  }
  const std::string type = res.get_header_value("Content-Type");
  if (!res.has_header("Content-Encoding") && (type == "application/json" || type == "application/problem+json") &&
      !nlohmann::json::accept(body)) {
    fuzz::finding("a JSON answer that does not parse: " + body.substr(0, 200));
  }
  // Uploads beyond the seeded report are dropped, so every input meets the same database.
  service.db.sql().exec("DELETE FROM probe_reports WHERE id > 1", "drop the uploads of this input");
  return 0;
}
