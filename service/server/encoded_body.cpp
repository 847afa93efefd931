#include "server/encoded_body.hpp"

#include <httplib.h>
#include <strings.h>
#include <zlib.h>

#include <string_view>

#include "linkwise/error.hpp"

namespace linkwise::server {
namespace {

constexpr std::size_t kMinCompressBytes = 1024;

std::string gzip_compress(const std::string& data) {
  z_stream stream{};
  // windowBits 15 + 16: a gzip header and trailer rather than a bare zlib stream.
  if (deflateInit2(&stream, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw Error(ErrorKind::internal, "zlib deflateInit2 failed");
  }
  std::string out(deflateBound(&stream, data.size()), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  if (rc != Z_STREAM_END) throw Error(ErrorKind::internal, "zlib deflate failed");
  return out;
}

// True when Accept-Encoding lists gzip (or *) without q=0.
bool accepts_gzip(const httplib::Request& req) {
  const std::string header = req.get_header_value("Accept-Encoding");
  std::string_view rest = header;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    const auto semicolon = item.find(';');
    std::string_view coding = item.substr(0, semicolon);
    while (!coding.empty() && coding.back() == ' ') coding.remove_suffix(1);
    const bool named = (coding.size() == 4 && strncasecmp(coding.data(), "gzip", 4) == 0) || coding == "*";
    if (!named) continue;
    if (semicolon == std::string_view::npos) return true;
    std::string_view params = item.substr(semicolon + 1);
    while (!params.empty() && params.front() == ' ') params.remove_prefix(1);
    if (params.substr(0, 2) == "q=" || params.substr(0, 2) == "Q=") {
      const std::string_view q = params.substr(2);
      if (q.find_first_not_of("0.") == std::string_view::npos) return false;  // q=0, q=0.0, q=0.000
    }
    return true;
  }
  return false;
}

}  // namespace

const std::string& EncodedBody::gzip() const {
  std::call_once(gzip_once_, [this] {
    if (identity_.size() >= kMinCompressBytes) gzip_ = gzip_compress(identity_);
  });
  return gzip_;
}

std::shared_ptr<const EncodedBody> encode_body(std::string json) {
  return std::make_shared<const EncodedBody>(std::move(json));
}

void send_encoded(const httplib::Request& req, httplib::Response& res, std::shared_ptr<const EncodedBody> body,
                  const char* content_type) {
  res.status = 200;
  res.set_header("Vary", "Accept-Encoding");
  const bool compressed = accepts_gzip(req) && !body->gzip().empty();
  if (compressed) res.set_header("Content-Encoding", "gzip");
  const std::string& bytes = compressed ? body->gzip() : body->identity();
  res.set_content_provider(
      bytes.size(), content_type,
      [body = std::move(body), &bytes](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
        return sink.write(bytes.data() + offset, length);
      });
}

}  // namespace linkwise::server
