#include "server/auth.hpp"

#include <span>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <strings.h>
#include <sys/random.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "linkwise/error.hpp"

namespace linkwise::server {
namespace {

constexpr std::string_view kKeyPrefix = "lw_";
constexpr std::size_t kKeyBytes = 32;

std::array<unsigned char, kKeyBytes> random_bytes() {
  std::array<unsigned char, kKeyBytes> bytes{};
  std::size_t filled = 0;
  while (filled < bytes.size()) {
    const ssize_t n = getrandom(bytes.data() + filled, bytes.size() - filled, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(ErrorKind::io, std::string("getrandom failed: ") + std::strerror(errno));
    }
    filled += static_cast<std::size_t>(n);
  }
  return bytes;
}

std::string to_hex(const unsigned char* data, std::size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(size * 2);
  for (std::size_t i = 0; i < size; ++i) {
    out += kDigits[data[i] >> 4];
    out += kDigits[data[i] & 0xf];
  }
  return out;
}

bool well_formed_key(std::string_view key) {
  if (key.size() != kKeyPrefix.size() + 2 * kKeyBytes || key.substr(0, kKeyPrefix.size()) != kKeyPrefix) {
    return false;
  }
  for (char c : key.substr(kKeyPrefix.size())) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace

void check_key_name(std::string_view name) {
  const bool ok = !name.empty() && name.size() <= 64 &&
                  name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") ==
                      std::string_view::npos;
  if (!ok) {
    throw_invalid("name", "key name \"" + std::string(name) +
                              "\": expected 1 to 64 characters from A-Z, a-z, 0-9, '.', '_' and '-'");
  }
}

std::string sha256(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &size, EVP_sha256(), nullptr) != 1 || size != 32) {
    throw Error(ErrorKind::internal, "OpenSSL SHA-256 failed");
  }
  return std::string(reinterpret_cast<const char*>(digest), size);
}

std::string KeyStore::create(std::string_view name) {
  check_key_name(name);
  const auto bytes = random_bytes();
  const std::string key = std::string(kKeyPrefix) + to_hex(bytes.data(), bytes.size());
  const std::string hash = sha256(key);
  std::lock_guard lock(db_.mutex());
  db_.transaction("creating a key", [&] {
    Statement exists(db_.sql(), "SELECT 1 FROM api_keys WHERE name = ?", "look up a key name");
    exists.bind(1, name);
    if (exists.step()) {
      throw Error(ErrorKind::conflict, "a key named \"" + std::string(name) + "\" exists already", "name");
    }
    Statement insert(db_.sql(), "INSERT INTO api_keys (name, key_sha256, created_at) VALUES (?, ?, ?)", "store a key");
    insert.bind(1, name).bind_blob(2, std::as_bytes(std::span(hash))).bind(3, utc_now_rfc3339());
    insert.run();
  });
  return key;
}

std::vector<KeyInfo> KeyStore::list() {
  std::lock_guard lock(db_.mutex());
  Statement select(db_.sql(), "SELECT name, created_at, revoked_at FROM api_keys ORDER BY name", "list keys");
  std::vector<KeyInfo> keys;
  while (select.step()) {
    keys.push_back({select.text(0), select.text(1), select.optional_text(2)});
  }
  return keys;
}

void KeyStore::revoke(std::string_view name) {
  std::lock_guard lock(db_.mutex());
  db_.transaction("revoking a key", [&] {
    Statement find(db_.sql(), "SELECT revoked_at FROM api_keys WHERE name = ?", "look up a key");
    find.bind(1, name);
    if (!find.step()) throw_not_found("name", "no key named \"" + std::string(name) + "\"");
    if (auto revoked = find.optional_text(0)) {
      throw Error(ErrorKind::conflict, "key \"" + std::string(name) + "\" was revoked at " + *revoked, "name");
    }
    Statement update(db_.sql(), "UPDATE api_keys SET revoked_at = ? WHERE name = ?", "revoke a key");
    update.bind(1, utc_now_rfc3339()).bind(2, name);
    update.run();
  });
}

std::string KeyStore::authenticate(std::optional<std::string_view> authorization) {
  constexpr std::string_view kScheme = "Bearer ";
  if (!authorization) {
    throw Error(ErrorKind::unauthorized, "this request writes: send an API key as \"Authorization: Bearer KEY\"",
                "Authorization");
  }
  std::string_view value = *authorization;
  if (value.size() < kScheme.size() || strncasecmp(value.data(), kScheme.data(), kScheme.size()) != 0) {
    throw Error(ErrorKind::unauthorized, "Authorization: expected the scheme \"Bearer\" followed by an API key",
                "Authorization");
  }
  value.remove_prefix(kScheme.size());
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
  if (!well_formed_key(value)) {
    throw Error(ErrorKind::unauthorized,
                "Authorization: not an API key (expected \"lw_\" and 64 hex digits, as `linkwise keys create` prints)",
                "Authorization");
  }
  const std::string presented = sha256(value);

  // Compare against every stored hash without stopping at a match, so the time taken does not
  // depend on which key (if any) matched.
  std::lock_guard lock(db_.mutex());
  Statement select(db_.sql(), "SELECT name, key_sha256, revoked_at IS NOT NULL FROM api_keys", "read the keys");
  std::string matched;
  bool revoked = false;
  while (select.step()) {
    const std::string stored = select.blob(1);
    if (stored.size() == presented.size() && CRYPTO_memcmp(stored.data(), presented.data(), presented.size()) == 0) {
      matched = select.text(0);
      revoked = select.integer(2) != 0;
    }
  }
  if (matched.empty()) throw Error(ErrorKind::forbidden, "this API key is not known to this server", "Authorization");
  if (revoked) throw Error(ErrorKind::forbidden, "this API key was revoked", "Authorization");
  return matched;
}

}  // namespace linkwise::server
