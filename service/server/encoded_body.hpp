// A response body kept for many responses (the catalog's JSON, cached answers), stored as is and
// gzip-compressed at most once, on the first request that accepts gzip (curl --compressed, Python
// requests, every browser): such clients get a body about 7x smaller without the server compressing
// per request, and an answer no client asks compressed (a planner answer fetched once) costs no
// compression at all.
#pragma once

#include <memory>
#include <mutex>
#include <string>

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace linkwise::server {

class EncodedBody {
 public:
  explicit EncodedBody(std::string json) : identity_(std::move(json)) {}

  const std::string& identity() const { return identity_; }
  // The gzip form (level 6), compressed on the first call; thread-safe. Empty for bodies under
  // 1 KiB, which gain too little from compression.
  const std::string& gzip() const;

 private:
  std::string identity_;
  mutable std::once_flag gzip_once_;
  mutable std::string gzip_;
};

std::shared_ptr<const EncodedBody> encode_body(std::string json);

// Sends the body with status 200 as `content_type` (JSON unless told), gzip-encoded when the request
// accepts it, without copying it into the response.
void send_encoded(const httplib::Request& req, httplib::Response& res, std::shared_ptr<const EncodedBody> body,
                  const char* content_type = "application/json");

}  // namespace linkwise::server
