// Bodies of GET responses that depend only on the request target and the catalog snapshot, which
// never changes while the server runs: computed once per distinct target, then served from
// memory. Bounded by bytes: when full it is emptied and refills with what clients ask now.
#pragma once

#include <cstddef>
#include <memory>
#include <shared_mutex>
#include <string>
#include <unordered_map>

#include "server/encoded_body.hpp"

namespace linkwise::server {

class ResponseCache {
 public:
  explicit ResponseCache(std::size_t budget_bytes) : budget_bytes_(budget_bytes) {}

  std::shared_ptr<const EncodedBody> find(const std::string& target) const;
  void insert(const std::string& target, std::shared_ptr<const EncodedBody> body);

 private:
  std::size_t budget_bytes_;
  mutable std::shared_mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<const EncodedBody>> bodies_;
  std::size_t bytes_ = 0;
};

}  // namespace linkwise::server
