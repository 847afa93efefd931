#include "cli/db_option.hpp"

#include <cstdlib>
#include <system_error>

#include "linkwise/error.hpp"

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
  std::optional<std::filesystem::path> path;
  if (!db_flag().empty()) path = db_flag();
  else if (const char* env = std::getenv("LINKWISE_DB"); env && *env) path = env;
  // A directory is a bad option (exit 2), not a database that failed to open (exit 3).
  std::error_code ec;
  if (path && std::filesystem::is_directory(*path, ec))
    throw_invalid("db", "--db: " + path->string() + " is a directory; give the database file's path");
  return path;
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
