// GET /, GET /docs, GET /assets/{name}: the web page (service/web/, Chart.js from Debian's
// libjs-chart.js, Swagger UI from PyPI's swagger-ui-py), compiled into the binary at build time
// (web_assets.hpp). The page is a client of the public REST API and nothing else.
//
// Caching: the two HTML documents are revalidated on every load (Cache-Control: no-cache, with an
// ETag, so a reload costs a 304); each /assets/ URL they reference carries ?v=<hash of the file>,
// and such a URL is cached for a year as immutable: a new build changes the hash, so browsers never
// run stale scripts. /assets/ without the right v= is served too, revalidated like the HTML.
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "linkwise/error.hpp"
#include "server/handlers.hpp"
#include "server/web_assets.hpp"

namespace linkwise::server {
namespace {

// The policy of the page: scripts and connections to this origin only (no inline script, no eval),
// styles from this origin plus the style attributes Chart.js and Swagger UI set, images inline.
constexpr const char* kContentSecurityPolicy =
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'";

struct WebFile {
  const char* content_type = "application/octet-stream";
  std::shared_ptr<const EncodedBody> body;
  std::string version;  // 16 hex digits of FNV-1a 64 over the bytes: the ?v= of its URL
  std::string etag;     // "\"<version>\""
};

std::string fnv1a_hex(std::string_view bytes) {
  std::uint64_t hash = 1469598103934665603ULL;
  for (const char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ULL;
  }
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(hash));
  return out;
}

const char* content_type_of(std::string_view name) {
  const auto dot = name.rfind('.');
  const std::string_view ext = dot == std::string_view::npos ? std::string_view() : name.substr(dot + 1);
  if (ext == "html") return "text/html; charset=utf-8";
  if (ext == "js") return "text/javascript; charset=utf-8";
  if (ext == "css") return "text/css; charset=utf-8";
  if (ext == "svg") return "image/svg+xml";
  if (ext == "png") return "image/png";
  if (ext == "json" || ext == "map") return "application/json";
  if (ext == "txt") return "text/plain; charset=utf-8";
  return "application/octet-stream";
}

WebFile make_file(std::string_view name, std::string bytes) {
  WebFile file;
  file.content_type = content_type_of(name);
  file.version = fnv1a_hex(bytes);
  file.etag = "\"" + file.version + "\"";
  file.body = encode_body(std::move(bytes));
  return file;
}

// The embedded files by name; the HTML documents with their /assets/ references fingerprinted.
struct WebFiles {
  std::map<std::string, WebFile, std::less<>> assets;
  WebFile index;
  WebFile docs;

  WebFiles() {
    std::map<std::string_view, std::string_view> html;
    for (std::size_t i = 0; i < web::kAssetCount; ++i) {
      const auto& asset = web::kAssets[i];
      if (asset.name.ends_with(".html")) html.emplace(asset.name, asset.bytes);
      else assets.emplace(std::string(asset.name), make_file(asset.name, std::string(asset.bytes)));
    }
    index = make_file("index.html", fingerprint(html["index.html"]));
    docs = make_file("docs.html", fingerprint(html["docs.html"]));
  }

  // "/assets/app.js" between quotes becomes "/assets/app.js?v=<hash>".
  std::string fingerprint(std::string_view page) const {
    std::string out(page);
    for (const auto& [name, file] : assets) {
      const std::string from = "\"/assets/" + name + "\"";
      const std::string to = "\"/assets/" + name + "?v=" + file.version + "\"";
      for (auto at = out.find(from); at != std::string::npos; at = out.find(from, at + to.size())) {
        out.replace(at, from.size(), to);
      }
    }
    return out;
  }
};

const WebFiles& web_files() {
  static const WebFiles files;
  return files;
}

// The v= value of the query, if any (other parameters are ignored: a page may be linked with any).
std::string version_asked(const httplib::Request& req) {
  const auto it = req.params.find("v");
  return it == req.params.end() ? std::string() : it->second;
}

void send_file(const httplib::Request& req, httplib::Response& res, const WebFile& file, bool immutable,
               bool document) {
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Referrer-Policy", "no-referrer");
  if (document) {
    res.set_header("Content-Security-Policy", kContentSecurityPolicy);
    res.set_header("X-Frame-Options", "DENY");
  }
  res.set_header("Cache-Control", immutable ? "public, max-age=31536000, immutable" : "no-cache");
  res.set_header("ETag", file.etag);
  const std::string if_none_match = req.get_header_value("If-None-Match");
  // One ETag, a list of them, or a weak one (W/"..."): ours appearing in it is a match.
  if (if_none_match == "*" || if_none_match.find(file.etag) != std::string::npos) {
    res.set_header("Vary", "Accept-Encoding");
    res.status = 304;
    return;
  }
  send_encoded(req, res, file.body, file.content_type);
}

}  // namespace

void add_web_routes(Router& router, Context&) {
  web_files();  // built once at startup, not on the first request
  router.add("GET", "/", [](const httplib::Request& req, httplib::Response& res, const PathParams&) {
    send_file(req, res, web_files().index, false, true);
  });
  router.add("GET", "/docs", [](const httplib::Request& req, httplib::Response& res, const PathParams&) {
    send_file(req, res, web_files().docs, false, true);
  });
  router.add("GET", "/assets/{name}",
             [](const httplib::Request& req, httplib::Response& res, const PathParams& params) {
               const auto& files = web_files().assets;
               const std::string& name = params.find("name")->second;
               const auto it = files.find(name);
               if (it == files.end()) throw_not_found("name", "no file \"" + name + "\" in the web page's assets");
               send_file(req, res, it->second, version_asked(req) == it->second.version, false);
             });
}

}  // namespace linkwise::server
