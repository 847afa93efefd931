// A response body kept for many responses (the catalog's JSON, cached answers), stored as is and
// gzip-compressed once, so a client that accepts gzip (curl --compressed, Python requests, every
// browser) gets a body about 7x smaller without the server compressing per request.
#pragma once

#include <memory>
#include <string>

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace linkwise::server {

struct EncodedBody {
  std::string identity;
  std::string gzip;  // empty when the body is too small to gain from compression
};

// Compresses bodies of 1 KiB and more (gzip, level 6).
std::shared_ptr<const EncodedBody> encode_body(std::string json);

// Sends the body as application/json with status 200, gzip-encoded when the request accepts it,
// without copying it into the response.
void send_encoded(const httplib::Request& req, httplib::Response& res, std::shared_ptr<const EncodedBody> body);

}  // namespace linkwise::server
