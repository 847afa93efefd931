#include "server/response_cache.hpp"

#include <mutex>

namespace linkwise::server {

std::shared_ptr<const EncodedBody> ResponseCache::find(const std::string& target) const {
  std::shared_lock lock(mutex_);
  auto it = bodies_.find(target);
  return it == bodies_.end() ? nullptr : it->second;
}

void ResponseCache::insert(const std::string& target, std::shared_ptr<const EncodedBody> body) {
  // The gzip copy is made later, on the first request that accepts it: count room for it now
  // (these JSON bodies compress 5-8x).
  const std::size_t size = target.size() + body->identity().size() + body->identity().size() / 4;
  if (size > budget_bytes_) return;
  std::unique_lock lock(mutex_);
  if (bytes_ + size > budget_bytes_) {
    bodies_.clear();
    bytes_ = 0;
  }
  if (bodies_.emplace(target, std::move(body)).second) bytes_ += size;
}

}  // namespace linkwise::server
