// `linkwise serve` and `linkwise keys create|list|revoke`.
//
// Where things live:
//  - with --db PATH (or $LINKWISE_DB, see db_option.hpp): one SQLite file holds the catalog tables
//    (seeded from the catalog built into this binary when the file is new) and the service's own
//    tables (API keys, probe reports); the catalog is served from that file.
//  - without: the catalog built into this binary is served (read-only, always this build's), and
//    keys and reports go to the per-user file $XDG_DATA_HOME/linkwise/linkwise.db (or
//    ~/.local/share/linkwise/linkwise.db), so `linkwise keys create` and `linkwise serve` meet there.
#include <arpa/inet.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/db_option.hpp"
#include "linkwise/catalog_db.hpp"
#include "linkwise/error.hpp"
#include "server/auth.hpp"
#include "server/context.hpp"
#include "server/database.hpp"
#include "server/server.hpp"

namespace linkwise::cli {
namespace {

namespace fs = std::filesystem;

fs::path default_db_path() {
  fs::path base;
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg) {
    base = xdg;
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    base = fs::path(home) / ".local" / "share";
  } else {
    throw_invalid("db", "no --db given and neither XDG_DATA_HOME nor HOME is set: pass --db PATH");
  }
  return base / "linkwise" / "linkwise.db";
}

// The database for keys and reports; `catalog_in_db` says whether the catalog is served from it.
struct Store {
  fs::path path;
  bool catalog_in_db = false;
};

Store open_store() {
  const auto chosen = chosen_db_path();
  Store store{chosen ? *chosen : default_db_path(), chosen.has_value()};
  std::error_code ec;
  if (store.path.has_parent_path()) fs::create_directories(store.path.parent_path(), ec);
  if (ec) throw Error(ErrorKind::io, "cannot create " + store.path.parent_path().string() + ": " + ec.message(), "db");
  server::check_database_file(store.path);  // before anything reads or writes it
  if (store.catalog_in_db && ensure_catalog_db(store.path)) {
    std::cerr << "linkwise: created " << store.path.string() << " from the embedded catalog\n";
  }
  return store;
}

struct ServeOptions {
  server::ServerOptions server;
  bool quiet = false;
};

// --host: an IP address (v4 or v6) or a host name. Digits and dots that are no IPv4 address
// ("999.1.1.1"), or a ':' that is no IPv6 address, are a typo: refused before anything is opened
// (exit 2); a name is left to the resolver.
void check_host(const std::string& host) {
  unsigned char address[sizeof(in6_addr)];
  const bool numeric = !host.empty() && host.find_first_not_of("0123456789.") == std::string::npos;
  const bool v6 = host.find(':') != std::string::npos;
  if (host.empty() || (numeric && inet_pton(AF_INET, host.c_str(), address) != 1) ||
      (v6 && inet_pton(AF_INET6, host.c_str(), address) != 1))
    throw_invalid("--host", "--host: \"" + host + "\" is not an IPv4 or IPv6 address (e.g. 127.0.0.1, 0.0.0.0, ::1)");
}

void serve(const ServeOptions& options) {
  check_host(options.server.host);
  // Keep freed memory for reuse instead of handing it back to the kernel. With a thread per
  // connection, glibc's per-thread arenas otherwise trim and refault pages around every large
  // response, and each trim interrupts every core to flush TLBs: 12% of the server's time under
  // wrk on GET /v1/instances, before this.
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  // But a block of 1 MiB or more is its own mapping, handed back when freed: the largest response
  // (GET /v1/instances, ~350 KB) stays in the arenas as above, while request buffers of large
  // bodies (up to 4 MiB each, up to 256 MiB received at once) no longer stay in the arenas under
  // the trim threshold: 70 clients sending 4 MiB bodies left the process at 400 MB for good.
  mallopt(M_MMAP_THRESHOLD, 1 << 20);

  // SIGINT and SIGTERM are blocked in every thread (the pool inherits the mask) and taken by one
  // waiting thread, which stops the server: no more accepting, in-flight requests finish.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  const Store store = open_store();
  const fs::path& db_path = store.path;
  // The catalog is read (and a foreign or damaged file refused) before the service opens the file
  // for writing, so a refused file is left exactly as it was.
  Catalog catalog = store.catalog_in_db ? Catalog::open(db_path) : Catalog::embedded();
  server::Database db(db_path);
  server::Context ctx(std::move(catalog), db);
  server::ServerOptions server_options = options.server;
  server_options.access_log = !options.quiet;
  server::Server http(ctx, server_options);
  http.bind();

  // An IPv6 address in a URL goes in brackets (RFC 3986 3.2.2): http://[::1]:8080, not http://::1:8080.
  const std::string& host = server_options.host;
  const std::string url_host = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  std::cerr << "linkwise serve: http://" << url_host << ":" << http.port() << " (" << ctx.catalog.instances().size()
            << " instance types, " << ctx.catalog.gpus().size() << " GPU models from "
            << (store.catalog_in_db ? db_path.string() : "the embedded catalog") << "; keys and probe reports in "
            << db_path.string() << "; " << server_options.threads
            << " threads; web page at /, API reference at /docs, OpenAPI at /openapi.json)\n";
  if (server_options.host != "127.0.0.1" && server_options.host != "localhost" && server_options.host != "::1") {
    std::cerr << "linkwise serve: listening beyond loopback on " << server_options.host
              << ": reads are open to anyone who can reach it\n";
  }

  std::atomic<bool> serving_done{false};
  std::thread waiter([&] {
    int signal_number = 0;
    sigwait(&stop_signals, &signal_number);
    if (serving_done) return;  // woken by the main thread below, not by a user
    std::cerr << "linkwise serve: " << (signal_number == SIGINT ? "SIGINT" : "SIGTERM")
              << ": stopping; finishing requests in flight\n";
    http.stop();
  });
  http.run();
  serving_done = true;
  pthread_kill(waiter.native_handle(), SIGTERM);  // a no-op for the waiter if it already returned
  waiter.join();
  std::cerr << "linkwise serve: stopped; closing " << db_path.string() << "\n";
}

}  // namespace

void register_service_commands(CLI::App& app) {
  auto options = std::make_shared<ServeOptions>();
  auto* serve_cmd = app.add_subcommand(
      "serve", "Start the REST service (loopback only unless --host says otherwise; see /openapi.json). "
               "--db PATH (or $LINKWISE_DB): serve the catalog in PATH (created from the embedded catalog if "
               "missing) and keep keys and reports there. Without: the embedded catalog, and keys and reports in "
               "$XDG_DATA_HOME/linkwise/linkwise.db");
  serve_cmd->add_option("--host", options->server.host, "Address to listen on")->capture_default_str();
  serve_cmd->add_option("--port", options->server.port, "TCP port")->capture_default_str()->check(CLI::Range(1, 65535));
  serve_cmd
      ->add_option("--threads", options->server.threads,
                   "Worker threads = the most connections served at once (each kept-alive connection holds one)")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  serve_cmd->add_flag("--quiet", options->quiet, "No access log on stderr");
  serve_cmd->callback([options] { serve(*options); });

  auto* keys = app.add_subcommand(
      "keys", "API keys for the REST service's writes, in the database `linkwise serve` uses (--db, as serve)");
  keys->require_subcommand(1);
  auto name = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);

  auto* create = keys->add_subcommand("create", "Create a key and print it (only this once)");
  create->add_option("NAME", *name, "A name for the key (who or what uses it)")->required();
  create->callback([name] {
    server::check_key_name(*name);  // before the database is opened, or created
    server::Database database(open_store().path);
    const std::string key = server::KeyStore(database).create(*name);
    std::cerr << "linkwise: key \"" << *name << "\" created; it is shown once, store it now:\n";
    std::cout << key << "\n";
  });

  auto* list = keys->add_subcommand("list", "List the keys (names and dates, never the keys)");
  list->add_flag("--json", *json, "Print JSON");
  list->callback([json] {
    server::Database database(open_store().path);
    const auto keys_found = server::KeyStore(database).list();
    if (*json) {
      auto out = nlohmann::ordered_json::array();
      for (const auto& k : keys_found) {
        out.push_back({{"name", k.name},
                       {"created_at", k.created_at},
                       {"revoked_at", k.revoked_at ? nlohmann::ordered_json(*k.revoked_at) : nullptr}});
      }
      std::cout << out.dump(2) << "\n";
      return;
    }
    std::size_t width = 4;
    for (const auto& k : keys_found) width = std::max(width, k.name.size());
    std::cout << std::left << std::setw(static_cast<int>(width)) << "NAME"
              << "  CREATED               REVOKED\n";
    for (const auto& k : keys_found) {
      std::cout << std::setw(static_cast<int>(width)) << k.name << "  " << k.created_at << "  "
                << k.revoked_at.value_or("-") << "\n";
    }
  });

  auto* revoke = keys->add_subcommand("revoke", "Revoke a key: writes with it are refused at once");
  revoke->add_option("NAME", *name, "The key's name")->required();
  revoke->callback([name] {
    server::Database database(open_store().path);
    server::KeyStore(database).revoke(*name);
    std::cerr << "linkwise: key \"" << *name << "\" revoked\n";
  });
}

}  // namespace linkwise::cli
