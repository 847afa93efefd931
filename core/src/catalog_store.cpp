// The SQLite store of the catalog: schema, atomic save, open, and price updates.
//
// Tables (schema version 2):
//   meta(key, value)                 "schema_version" -> "2" (the catalog's version; the service
//                                    keeps its own under another key: linkwise/sqlite.hpp)
//   gpus(position, id, ...)          one row per GPU, columns named as the JSON fields
//   instances(position, id, ...)     one row per instance, columns named as the JSON fields, with
//                                    price_usd_per_gpu_hour a generated (virtual) column
//   instance_regions(instance_id, position, region)
//   sources(owner_kind, owner_id, fact_group, url, as_of, note)   owner_kind 'gpu' | 'instance'
// `position` keeps the reviewed files' order (family, then size). Other tables in the same file
// (the service's probe reports, API keys) are left alone by everything here.
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <iterator>

#include "catalog_store_internal.hpp"
#include "linkwise/catalog_db.hpp"
#include "linkwise/error.hpp"
#include "linkwise/sqlite.hpp"

namespace linkwise {
namespace {

namespace fs = std::filesystem;
using sqlite::Database;
using sqlite::in_transaction;
using sqlite::Statement;

constexpr const char* kCatalogTables[] = {"instance_regions", "sources", "instances", "gpus"};

// The current schema (version kCatalogSchemaVersion), for a fresh write. Columns of a migrated file
// may come in another order, so every statement names its columns.
constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE gpus (
  position            INTEGER NOT NULL,
  id                  TEXT PRIMARY KEY,
  vendor              TEXT NOT NULL,
  architecture        TEXT NOT NULL,
  memory_gb           REAL NOT NULL,
  hbm_gbytes_per_s    REAL NOT NULL,
  bf16_dense_tflops   REAL,
  fp16_dense_tflops   REAL,
  fp8_dense_tflops    REAL,
  fp4_dense_tflops    REAL,
  nvlink_gbytes_per_s REAL,
  nvlink_generation   INTEGER,
  nvlink_domain_max_gpus INTEGER,
  pcie_gen            INTEGER,
  tdp_w               REAL
);
CREATE TABLE instances (
  position                INTEGER NOT NULL,
  id                      TEXT PRIMARY KEY,
  provider                TEXT NOT NULL,
  name                    TEXT NOT NULL,
  gpu_model               TEXT NOT NULL REFERENCES gpus(id),
  gpu_count               INTEGER NOT NULL,
  gpu_memory_gb           REAL NOT NULL,
  vcpus                   INTEGER,
  memory_gib              REAL,
  intra_node_fabric       TEXT NOT NULL,
  nvlink_gbytes_per_s     REAL,
  nvlink_domain_gpus      INTEGER,
  network_type            TEXT NOT NULL,
  network_gbits_per_s     REAL,
  network_nics            INTEGER,
  network_nic_gbits_per_s REAL,
  frontend_network_gbits_per_s REAL,
  gpudirect_rdma          INTEGER,
  price_usd_per_hour      REAL,
  price_region            TEXT,
  price_as_of             TEXT,
  spot_price_usd_per_hour REAL,
  price_usd_per_gpu_hour  REAL GENERATED ALWAYS AS (price_usd_per_hour / gpu_count) VIRTUAL
);
CREATE INDEX instances_by_provider ON instances(provider);
CREATE INDEX instances_by_gpu ON instances(gpu_model);
CREATE TABLE instance_regions (
  instance_id TEXT NOT NULL REFERENCES instances(id) ON DELETE CASCADE,
  position    INTEGER NOT NULL,
  region      TEXT NOT NULL,
  PRIMARY KEY (instance_id, region)
);
CREATE INDEX instance_regions_by_region ON instance_regions(region);
CREATE TABLE sources (
  owner_kind TEXT NOT NULL CHECK (owner_kind IN ('gpu', 'instance')),
  owner_id   TEXT NOT NULL,
  fact_group TEXT NOT NULL,
  url        TEXT NOT NULL,
  as_of      TEXT NOT NULL,
  note       TEXT,
  PRIMARY KEY (owner_kind, owner_id, fact_group)
);
)sql";

// Migrations (sqlite::migrate): each step brings a file from one version to the next; a change of
// the schema appends its step here and bumps kCatalogSchemaVersion. New columns of a migrated file
// are null (unknown) until the next build-db from data/. A catalog is never built by migrations
// from nothing: a new file gets kSchema whole (write_catalog_tables).
constexpr sqlite::Migration kMigrations[] = {
    // 1 -> 2: FP4 and NVLink domain figures; the GPU fabric split into NICs and the front end; the
    // derived per-GPU price (virtual, so price updates keep it right).
    {1, R"sql(
ALTER TABLE gpus ADD COLUMN fp4_dense_tflops REAL;
ALTER TABLE gpus ADD COLUMN nvlink_domain_max_gpus INTEGER;
ALTER TABLE instances ADD COLUMN nvlink_domain_gpus INTEGER;
ALTER TABLE instances ADD COLUMN network_nics INTEGER;
ALTER TABLE instances ADD COLUMN network_nic_gbits_per_s REAL;
ALTER TABLE instances ADD COLUMN frontend_network_gbits_per_s REAL;
ALTER TABLE instances ADD COLUMN price_usd_per_gpu_hour REAL
  GENERATED ALWAYS AS (price_usd_per_hour / gpu_count) VIRTUAL;
)sql"},
};
// The catalog's version is meta.schema_version (the key it has had since version 1).
constexpr sqlite::Schema kCatalogSchema{"catalog", "schema_version", kCatalogSchemaVersion, kMigrations};

// The catalog's schema version; throws invalid_input when the file holds no catalog.
int stored_schema_version(Database& db) {
  const int version = sqlite::stored_version(db, kCatalogSchema);
  if (version == 0) {
    throw Error(ErrorKind::invalid_input,
                db.label() + ": not a linkwise catalog database (no meta table with schema_version)");
  }
  return version;
}

// Brings an older file up to kCatalogSchemaVersion inside one transaction.
void migrate(Database& db) {
  stored_schema_version(db);  // a file without a catalog is not migrated into one
  sqlite::migrate(db, kCatalogSchema);
}

void insert_sources(Statement& statement, std::string_view kind, const std::string& owner, const Sources& sources) {
  for (const auto& [group, source] : sources) {
    statement.bind(1, kind);
    statement.bind(2, owner);
    statement.bind(3, group);
    statement.bind(4, source.url);
    statement.bind(5, source.as_of);
    statement.bind(6, source.note);
    statement.run();
  }
}

// An instance's regions, in order (the statement inserts instance_id, position, region).
void insert_regions(Statement& statement, const std::string& instance_id, const std::vector<std::string>& regions) {
  for (std::size_t r = 0; r < regions.size(); ++r) {
    statement.bind(1, instance_id);
    statement.bind(2, static_cast<int>(r));
    statement.bind(3, regions[r]);
    statement.run();
  }
}

// Drops the catalog tables (if any) and writes `catalog` at the current schema version.
void write_catalog_tables(Database& db, const Catalog& catalog) {
  in_transaction(db, "writing the catalog", [&] {
    for (const char* table : kCatalogTables) {
      db.exec(std::string("DROP TABLE IF EXISTS ") + table, "drop old catalog table");
    }
    db.exec(kSchema, "create the catalog tables");
    sqlite::set_version(db, kCatalogSchema, kCatalogSchemaVersion);

    Statement gpu(db,
                  "INSERT INTO gpus (position, id, vendor, architecture, memory_gb, hbm_gbytes_per_s,"
                  " bf16_dense_tflops, fp16_dense_tflops, fp8_dense_tflops, fp4_dense_tflops,"
                  " nvlink_gbytes_per_s, nvlink_generation, nvlink_domain_max_gpus, pcie_gen, tdp_w)"
                  " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
                  "insert a GPU");
    Statement instance(db,
                       "INSERT INTO instances (position, id, provider, name, gpu_model, gpu_count,"
                       " gpu_memory_gb, vcpus, memory_gib, intra_node_fabric, nvlink_gbytes_per_s,"
                       " nvlink_domain_gpus, network_type, network_gbits_per_s, network_nics,"
                       " network_nic_gbits_per_s, frontend_network_gbits_per_s, gpudirect_rdma,"
                       " price_usd_per_hour, price_region, price_as_of, spot_price_usd_per_hour)"
                       " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,"
                       " ?17, ?18, ?19, ?20, ?21, ?22)",
                       "insert an instance");
    Statement region(db, "INSERT INTO instance_regions VALUES (?1, ?2, ?3)", "insert a region");
    Statement source(db, "INSERT INTO sources VALUES (?1, ?2, ?3, ?4, ?5, ?6)", "insert a source");

    int position = 0;
    for (const Gpu& g : catalog.gpus()) {
      gpu.bind(1, position++);
      gpu.bind(2, g.id);
      gpu.bind(3, g.vendor);
      gpu.bind(4, to_string(g.architecture));
      gpu.bind(5, g.memory_gb);
      gpu.bind(6, g.hbm_gbytes_per_s);
      gpu.bind(7, g.bf16_dense_tflops);
      gpu.bind(8, g.fp16_dense_tflops);
      gpu.bind(9, g.fp8_dense_tflops);
      gpu.bind(10, g.fp4_dense_tflops);
      gpu.bind(11, g.nvlink_gbytes_per_s);
      gpu.bind(12, g.nvlink_generation);
      gpu.bind(13, g.nvlink_domain_max_gpus);
      gpu.bind(14, g.pcie_gen);
      gpu.bind(15, g.tdp_w);
      gpu.run();
      insert_sources(source, "gpu", g.id, g.sources);
    }
    position = 0;
    for (const Instance& i : catalog.instances()) {
      instance.bind(1, position++);
      instance.bind(2, i.id);
      instance.bind(3, i.provider);
      instance.bind(4, i.name);
      instance.bind(5, i.gpu_model);
      instance.bind(6, i.gpu_count);
      instance.bind(7, i.gpu_memory_gb);
      instance.bind(8, i.vcpus);
      instance.bind(9, i.memory_gib);
      instance.bind(10, to_string(i.intra_node_fabric));
      instance.bind(11, i.nvlink_gbytes_per_s);
      instance.bind(12, i.nvlink_domain_gpus);
      instance.bind(13, to_string(i.network_type));
      instance.bind(14, i.network_gbits_per_s);
      instance.bind(15, i.network_nics);
      instance.bind(16, i.network_nic_gbits_per_s);
      instance.bind(17, i.frontend_network_gbits_per_s);
      instance.bind(18, i.gpudirect_rdma);
      instance.bind(19, i.price_usd_per_hour);
      instance.bind(20, i.price_region);
      instance.bind(21, i.price_as_of);
      instance.bind(22, i.spot_price_usd_per_hour);
      instance.run();
      insert_regions(region, i.id, i.regions);
      insert_sources(source, "instance", i.id, i.sources);
    }
  });
}

// A temporary name beside `target`, unique within this process and across processes.
fs::path temporary_beside(const fs::path& target) {
  static std::atomic<unsigned> counter{0};
  const auto ticks = std::chrono::steady_clock::now().time_since_epoch().count();
  const fs::path directory = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string name = target.filename().string();
  name.insert(0, 1, '.');  // hidden while incomplete
  name += ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(ticks) + "-" + std::to_string(counter++);
  return directory / name;
}

void remove_quietly(const fs::path& path) {
  std::error_code ignored;
  fs::remove(path, ignored);
  fs::remove(path.string() + "-journal", ignored);
  fs::remove(path.string() + "-wal", ignored);
  fs::remove(path.string() + "-shm", ignored);
}

// Replaces `target` through a temporary file beside it: `fill` writes the temporary (and may throw
// to abandon it), then it is renamed over `target`. On any failure the temporary is removed and
// `target` stays as it was; a filesystem error becomes io, its message prefixed with `failure`.
void replace_atomically(const fs::path& target, const std::function<void(const fs::path&)>& fill,
                        const std::string& failure) {
  const fs::path temporary = temporary_beside(target);
  try {
    fill(temporary);
    fs::rename(temporary, target);
  } catch (const fs::filesystem_error& e) {
    remove_quietly(temporary);
    throw Error(ErrorKind::io, failure + e.what());
  } catch (...) {
    remove_quietly(temporary);
    throw;
  }
}

// Opens an existing file to read it. Read-write where the file allows it: a read-only connection to
// a file in WAL mode (the service's) leaves its -wal and -shm files behind when it closes, and a
// -wal beside the file is how save_catalog tells that another process has it open.
Database open_for_reading(const fs::path& path) {
  const int flags = ::access(path.c_str(), W_OK) == 0 ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY;
  return Database(path.string(), flags, path.string());
}

// Copies the SQLite file at `from` into the open database `to` (sqlite3 online backup).
void copy_database(const fs::path& from, Database& to) {
  Database source = open_for_reading(from);
  migrate_check_readable(source);
  sqlite3_backup* backup = sqlite3_backup_init(to.get(), "main", source.get(), "main");
  if (!backup) to.fail("start copying " + from.string());
  const int rc = sqlite3_backup_step(backup, -1);
  sqlite3_backup_finish(backup);
  if (rc != SQLITE_DONE) to.fail("copy " + from.string());
}

}  // namespace

// Reads and checks schema_version of a database opened for reading; refuses newer versions.
int migrate_check_readable(sqlite::Database& db) {
  const int version = stored_schema_version(db);
  sqlite::refuse_newer(db, kCatalogSchema, version);
  return version;
}

Catalog read_catalog(Database& db) {
  const int version = migrate_check_readable(db);
  if (version != kCatalogSchemaVersion) {
    throw Error(ErrorKind::internal,
                db.label() + ": schema version " + std::to_string(version) + " must be migrated before it is read");
  }
  std::vector<Gpu> gpus;
  std::vector<Instance> instances;
  Statement source(db, "SELECT owner_kind, owner_id, fact_group, url, as_of, note FROM sources", "read sources");
  std::map<std::pair<std::string, std::string>, Sources> sources;
  while (source.step()) {
    SourceRef ref{source.text(3), source.text(4), source.optional_text(5)};
    sources[{source.text(0), source.text(1)}].emplace(source.text(2), std::move(ref));
  }

  Statement gpu(db,
                "SELECT id, vendor, architecture, memory_gb, hbm_gbytes_per_s, bf16_dense_tflops,"
                " fp16_dense_tflops, fp8_dense_tflops, nvlink_gbytes_per_s, nvlink_generation, pcie_gen,"
                " tdp_w, fp4_dense_tflops, nvlink_domain_max_gpus FROM gpus ORDER BY position",
                "read GPUs");
  while (gpu.step()) {
    Gpu g;
    g.id = gpu.text(0);
    g.vendor = gpu.text(1);
    g.architecture = parse_architecture(gpu.text(2));
    g.memory_gb = gpu.real(3);
    g.hbm_gbytes_per_s = gpu.real(4);
    g.bf16_dense_tflops = gpu.optional_real(5);
    g.fp16_dense_tflops = gpu.optional_real(6);
    g.fp8_dense_tflops = gpu.optional_real(7);
    g.nvlink_gbytes_per_s = gpu.optional_real(8);
    g.nvlink_generation = gpu.optional_integer(9);
    g.pcie_gen = gpu.optional_integer(10);
    g.tdp_w = gpu.optional_real(11);
    g.fp4_dense_tflops = gpu.optional_real(12);
    g.nvlink_domain_max_gpus = gpu.optional_integer(13);
    g.sources = sources[{"gpu", g.id}];
    gpus.push_back(std::move(g));
  }

  std::map<std::string, std::vector<std::string>> regions;
  Statement region(db, "SELECT instance_id, region FROM instance_regions ORDER BY instance_id, position",
                   "read regions");
  while (region.step()) regions[region.text(0)].push_back(region.text(1));

  Statement instance(db,
                     "SELECT id, provider, name, gpu_model, gpu_count, gpu_memory_gb, vcpus, memory_gib,"
                     " intra_node_fabric, nvlink_gbytes_per_s, network_type, network_gbits_per_s,"
                     " gpudirect_rdma, price_usd_per_hour, price_region, price_as_of,"
                     " spot_price_usd_per_hour, nvlink_domain_gpus, network_nics, network_nic_gbits_per_s,"
                     " frontend_network_gbits_per_s FROM instances ORDER BY position",
                     "read instances");
  while (instance.step()) {
    Instance i;
    i.id = instance.text(0);
    i.provider = instance.text(1);
    i.name = instance.text(2);
    i.gpu_model = instance.text(3);
    i.gpu_count = instance.integer(4);
    i.gpu_memory_gb = instance.real(5);
    i.vcpus = instance.optional_integer(6);
    i.memory_gib = instance.optional_real(7);
    i.intra_node_fabric = parse_fabric(instance.text(8));
    i.nvlink_gbytes_per_s = instance.optional_real(9);
    i.network_type = parse_network_type(instance.text(10));
    i.network_gbits_per_s = instance.optional_real(11);
    if (!instance.is_null(12)) i.gpudirect_rdma = instance.integer(12) != 0;
    i.price_usd_per_hour = instance.optional_real(13);
    i.price_region = instance.optional_text(14);
    i.price_as_of = instance.optional_text(15);
    i.spot_price_usd_per_hour = instance.optional_real(16);
    i.nvlink_domain_gpus = instance.optional_integer(17);
    i.network_nics = instance.optional_integer(18);
    i.network_nic_gbits_per_s = instance.optional_real(19);
    i.frontend_network_gbits_per_s = instance.optional_real(20);
    i.regions = regions[i.id];
    i.sources = sources[{"instance", i.id}];
    instances.push_back(std::move(i));
  }
  return Catalog(std::move(gpus), std::move(instances));
}

Catalog Catalog::open(const fs::path& db_path) {
  if (!fs::exists(db_path)) {
    throw Error(ErrorKind::not_found, db_path.string() + ": no such catalog database");
  }
  {
    Database db = open_for_reading(db_path);
    if (migrate_check_readable(db) == kCatalogSchemaVersion) return read_catalog(db);
  }
  // An older file: migrate it in place (one transaction), then read it.
  Database db(db_path.string(), SQLITE_OPEN_READWRITE, db_path.string());
  migrate(db);
  return read_catalog(db);
}

void save_catalog(const Catalog& catalog, const fs::path& db_path) {
  const auto fill = [&](const fs::path& temporary) {
    {
      Database db(temporary.string(), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, db_path.string());
      if (fs::exists(db_path)) copy_database(db_path, db);  // keeps the service's own tables
      write_catalog_tables(db, catalog);
    }
    // A -wal beside the target means another connection has it open: renaming over it would pair
    // that WAL with the new file.
    if (fs::exists(db_path.string() + "-wal")) {
      throw Error(ErrorKind::conflict, db_path.string() + ": database is open in WAL mode by another process; stop it "
                                                          "before replacing the catalog file");
    }
  };
  replace_atomically(db_path, fill, db_path.string() + ": cannot write the catalog database: ");
}

void update_prices(const fs::path& db_path, const std::vector<PriceUpdate>& updates) {
  if (!fs::exists(db_path)) {
    throw Error(ErrorKind::not_found, db_path.string() + ": no such catalog database");
  }
  Database db(db_path.string(), SQLITE_OPEN_READWRITE, db_path.string());
  migrate(db);
  apply_price_updates(db, updates);
}

void apply_price_updates(Database& db, const std::vector<PriceUpdate>& updates) {
  in_transaction(db, "the price update", [&] {
    Statement price(db,
                    "UPDATE instances SET price_usd_per_hour = ?2, price_region = ?3, price_as_of = ?4,"
                    " spot_price_usd_per_hour = ?5 WHERE id = ?1",
                    "update a price");
    Statement clear_regions(db, "DELETE FROM instance_regions WHERE instance_id = ?1", "clear regions");
    Statement region(db, "INSERT INTO instance_regions VALUES (?1, ?2, ?3)", "insert a region");
    Statement source(db, "INSERT OR REPLACE INTO sources VALUES ('instance', ?1, 'price', ?2, ?3, ?4)",
                     "record the price source");
    for (const PriceUpdate& update : updates) {
      price.bind(1, update.instance_id);
      price.bind(2, update.price_usd_per_hour);
      price.bind(3, update.price_region);
      price.bind(4, update.price_as_of);
      price.bind(5, update.spot_price_usd_per_hour);
      price.run();
      if (db.changes() != 1) {
        throw Error(ErrorKind::not_found, db.label() + ": no instance \"" + update.instance_id + "\" to update",
                    "instance_id");
      }
      clear_regions.bind(1, update.instance_id);
      clear_regions.run();
      insert_regions(region, update.instance_id, update.regions);
      source.bind(1, update.instance_id);
      source.bind(2, update.price_source.url);
      source.bind(3, update.price_source.as_of);
      source.bind(4, update.price_source.note);
      source.run();
    }
  });
}

void write_file_atomically(const fs::path& path, std::span<const std::byte> bytes) {
  const auto fill = [&](const fs::path& temporary) {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) throw Error(ErrorKind::io, path.string() + ": cannot create " + temporary.string());
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) throw Error(ErrorKind::io, path.string() + ": write failed");
  };
  replace_atomically(path, fill, path.string() + ": ");
}

}  // namespace linkwise
