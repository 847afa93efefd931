#include "cli/db_option.hpp"

#include <cstdlib>

namespace linkwise::cli {
namespace {

std::string& db_flag() {
  static std::string value;
  return value;
}

}  // namespace

void add_global_db_option(CLI::App& app) {
  app.add_option("--db", db_flag(), "SQLite catalog database to use (default: $LINKWISE_DB, else the embedded catalog)")
      ->type_name("PATH");
  // Subcommands created after this inherit it: an option they do not know goes up to the app.
  app.fallthrough();
}

std::optional<std::filesystem::path> chosen_db_path() {
  if (!db_flag().empty()) return std::filesystem::path(db_flag());
  if (const char* env = std::getenv("LINKWISE_DB"); env && *env) return std::filesystem::path(env);
  return std::nullopt;
}

std::string chosen_db_description() {
  const auto path = chosen_db_path();
  return path ? "catalog database " + path->string() : std::string("the embedded catalog");
}

Catalog load_chosen_catalog() {
  const auto path = chosen_db_path();
  return path ? Catalog::open(*path) : Catalog::embedded();
}

}  // namespace linkwise::cli
