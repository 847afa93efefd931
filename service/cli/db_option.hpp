// Which catalog database a command reads: `--db PATH` (a global option, accepted before or after
// the subcommand), else the environment variable LINKWISE_DB, else the catalog embedded in the
// binary. Every command that reads the catalog (instances, plan, probe validate, serve) uses this.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "linkwise/catalog_db.hpp"

namespace linkwise::cli {

// Adds `--db PATH` to the top-level app (main.cpp's register_catalog_commands calls it once) and
// lets subcommands pass it through, so `linkwise instances --db x.db` works too.
void add_global_db_option(CLI::App& app);

// The database file chosen by --db or LINKWISE_DB; nullopt means the embedded catalog.
std::optional<std::filesystem::path> chosen_db_path();

// "the embedded catalog" or "catalog database x.db", for messages.
std::string chosen_db_description();

// The catalog of the chosen database (Catalog::open), or Catalog::embedded().
Catalog load_chosen_catalog();

}  // namespace linkwise::cli
