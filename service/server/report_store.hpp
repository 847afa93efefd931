// Probe reports uploaded by instances, kept in the service's tables of the SQLite database. A
// report is committed (WAL fsynced) before add() returns, so the 201 that follows is durable.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/database.hpp"

namespace linkwise::server {

struct StoredReport {
  std::int64_t id = 0;
  std::string instance_id;    // the catalog instance type the report was measured on
  std::string received_at;    // RFC 3339, UTC
  std::string key_name;       // the API key that uploaded it (its name, never the key)
  nlohmann::json report;      // as uploaded
  nlohmann::json validation;  // the check against the catalog's claims at upload time
};

class ReportStore {
 public:
  explicit ReportStore(Database& db) : db_(db) {}

  StoredReport add(const std::string& instance_id, const std::string& key_name, const nlohmann::json& report,
                   const nlohmann::json& validation);
  std::optional<StoredReport> get(std::int64_t id);

  struct Page {
    std::int64_t total = 0;
    std::vector<StoredReport> items;  // oldest first
  };
  // Reports of one instance type (or all), `limit` from `offset`.
  Page list(const std::optional<std::string>& instance_id, std::int64_t limit, std::int64_t offset);
  // Every report of one instance type, oldest first.
  std::vector<StoredReport> all_for(const std::string& instance_id);
  // The validation stored with each report of one instance type at upload, oldest first: what
  // fleet statistics read, so a read neither re-parses reports nor re-validates them.
  std::vector<nlohmann::json> validations_for(const std::string& instance_id);
  std::int64_t count();

 private:
  Database& db_;
};

}  // namespace linkwise::server
