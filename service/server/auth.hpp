// API keys for writes. A key is "lw_" followed by 64 hex digits (32 bytes from the kernel's
// random source); the database keeps only its SHA-256, and a presented key is compared with
// every stored hash in constant time. Keys are created, listed and revoked by `linkwise keys`;
// the server reads the table on each write, so a new or revoked key counts at once.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/database.hpp"

namespace linkwise::server {

// Throws invalid_input naming "name" unless `name` is 1-64 of A-Z a-z 0-9 . _ - (what create
// stores); `linkwise keys create` checks it before it opens, or creates, the database.
void check_key_name(std::string_view name);

struct KeyInfo {
  std::string name;
  std::string created_at;
  std::optional<std::string> revoked_at;
};

class KeyStore {
 public:
  explicit KeyStore(Database& db) : db_(db) {}

  // Stores a new key under `name` (1-64 of A-Z a-z 0-9 . _ -) and returns it: the only time the
  // key is seen. Throws conflict if the name is taken (revoked names stay taken).
  std::string create(std::string_view name);
  std::vector<KeyInfo> list();
  // Throws not_found for an unknown name, conflict if it is already revoked.
  void revoke(std::string_view name);

  // The name of the key in an "Authorization: Bearer KEY" header value. Throws unauthorized when
  // the header is missing or not a well-formed bearer key, forbidden when the key is unknown or
  // revoked.
  std::string authenticate(std::optional<std::string_view> authorization);

 private:
  Database& db_;
};

// SHA-256 of `data` as 32 raw bytes (OpenSSL EVP).
std::string sha256(std::string_view data);

}  // namespace linkwise::server
