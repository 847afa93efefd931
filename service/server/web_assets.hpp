// The web page's files, compiled in by the build (service/tools/embed_web.cpp writes the table
// from service/web/, Debian's libjs-chart.js and PyPI's swagger-ui-py).
#pragma once

#include <cstddef>
#include <string_view>

namespace linkwise::server::web {

struct Asset {
  std::string_view name;  // as asked for under /assets/ ("app.js"); "index.html" and "docs.html" too
  std::string_view bytes;
};

extern const Asset kAssets[];
extern const std::size_t kAssetCount;

}  // namespace linkwise::server::web
