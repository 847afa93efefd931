// Each family of subcommands registers itself on the `linkwise` app; main.cpp only lists them.
// A command's callback throws linkwise::Error; main.cpp maps it to a message and an exit code.
#pragma once

#include <CLI/CLI.hpp>

namespace linkwise::cli {

void register_catalog_commands(CLI::App& app);  // instances, gpus, catalog ...
void register_planner_commands(CLI::App& app);  // plan, recommend
void register_probe_commands(CLI::App& app);    // probe, validate
void register_service_commands(CLI::App& app);  // serve, keys
void register_report_commands(CLI::App& app);   // report show, report upload

}  // namespace linkwise::cli
