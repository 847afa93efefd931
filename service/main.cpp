// linkwise: choose cloud GPUs by their links. The command line front end over core/.
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "linkwise/error.hpp"

int main(int argc, char** argv) {
  CLI::App app{"linkwise: the GPU instance catalog, a planner, link probes and a REST service"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("linkwise ") + LINKWISE_VERSION);
  linkwise::cli::register_catalog_commands(app);
  linkwise::cli::register_planner_commands(app);
  linkwise::cli::register_probe_commands(app);
  linkwise::cli::register_service_commands(app);
  linkwise::cli::register_report_commands(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();  // a command's verdict, e.g. validate: 1 when a claim is below
  } catch (const CLI::ParseError& e) {
    // CLI11 prints usage errors; bad arguments exit 2 like every other bad input.
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  } catch (const linkwise::Error& e) {
    std::cerr << "linkwise: " << linkwise::visible_text(e.message()) << "\n";
    switch (e.kind()) {
      case linkwise::ErrorKind::invalid_input:
      case linkwise::ErrorKind::not_found:
      case linkwise::ErrorKind::unknown_reference:
      case linkwise::ErrorKind::conflict:  // e.g. `keys create` with a name already taken
      case linkwise::ErrorKind::unsupported:
      case linkwise::ErrorKind::unauthorized:  // report upload: a key the service refuses
      case linkwise::ErrorKind::forbidden: return 2;
      default: return 3;
    }
  } catch (const std::exception& e) {
    std::cerr << "linkwise: internal error: " << e.what() << "\n";
    return 3;
  }
  return 0;
}
