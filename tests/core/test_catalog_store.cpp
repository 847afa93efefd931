// The SQLite store: round trip, atomic save, foreign tables kept, schema versions, the embedded
// catalog, and transactional price updates.
#include <sqlite3.h>

#include <catch2/catch.hpp>

#include "catalog_test_util.hpp"
#include "linkwise/catalog_db.hpp"
#include "linkwise/error.hpp"

using namespace linkwise;
using namespace linkwise::test;
using Catch::Matchers::Contains;

namespace {

// Runs SQL on a database file directly, as another front end (the service) would.
void exec_sql(const fs::path& db, const std::string& sql) {
  sqlite3* handle = nullptr;
  REQUIRE(sqlite3_open(db.string().c_str(), &handle) == SQLITE_OK);
  char* error = nullptr;
  const int rc = sqlite3_exec(handle, sql.c_str(), nullptr, nullptr, &error);
  const std::string message = error ? error : "";
  sqlite3_free(error);
  sqlite3_close(handle);
  INFO(message);
  REQUIRE(rc == SQLITE_OK);
}

std::string query_text(const fs::path& db, const std::string& sql) {
  sqlite3* handle = nullptr;
  REQUIRE(sqlite3_open_v2(db.string().c_str(), &handle, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_stmt* statement = nullptr;
  REQUIRE(sqlite3_prepare_v2(handle, sql.c_str(), -1, &statement, nullptr) == SQLITE_OK);
  std::string out;
  if (sqlite3_step(statement) == SQLITE_ROW) {
    out = reinterpret_cast<const char*>(sqlite3_column_text(statement, 0));
  }
  sqlite3_finalize(statement);
  sqlite3_close(handle);
  return out;
}

std::size_t files_in(const fs::path& dir) {
  return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

const Catalog& fixture() {
  static const Catalog catalog = Catalog::load_data_dir(valid_data_dir());
  return catalog;
}

}  // namespace

TEST_CASE("save then open gives back the same catalog", "[catalog][store]") {
  ScratchDir dir;
  const fs::path db = dir.path() / "catalog.db";
  save_catalog(fixture(), db);
  const Catalog reopened = Catalog::open(db);
  CHECK(reopened.gpus() == fixture().gpus());
  CHECK(reopened.instances() == fixture().instances());
  CHECK(files_in(dir.path()) == 1);  // no temporary file left behind
  CHECK(query_text(db, "SELECT value FROM meta WHERE key = 'schema_version'") == std::to_string(kCatalogSchemaVersion));
  // Queryable with plain SQL, columns named as the JSON fields.
  CHECK(query_text(db, "SELECT id FROM instances WHERE gpu_model = 'MI300X'") == "azure:Standard_ND96isr_MI300X_v5");
  CHECK(query_text(db, "SELECT count(*) FROM instance_regions WHERE region = 'westus2'") == "4");
}

TEST_CASE("saving over a database keeps the tables of other front ends", "[catalog][store]") {
  ScratchDir dir;
  const fs::path db = dir.path() / "catalog.db";
  save_catalog(fixture(), db);
  exec_sql(db, "CREATE TABLE probe_reports (id INTEGER PRIMARY KEY, body TEXT);"
               "INSERT INTO probe_reports (body) VALUES ('kept');");
  const Catalog smaller(fixture().gpus(), std::vector<Instance>{fixture().instances().front()});
  save_catalog(smaller, db);
  CHECK(query_text(db, "SELECT body FROM probe_reports") == "kept");
  CHECK(Catalog::open(db).instances().size() == 1);
}

TEST_CASE("a failed save leaves no file, and an existing file untouched", "[catalog][store]") {
  ScratchDir dir;
  SECTION("into a directory that does not exist") {
    const fs::path db = dir.path() / "missing" / "catalog.db";
    CHECK_THROWS_AS(save_catalog(fixture(), db), Error);
    CHECK_FALSE(fs::exists(db));
  }
  SECTION("over a file that is not a database") {
    const fs::path db = dir.path() / "catalog.db";
    write_text(db, "not a database, but someone's file");
    CHECK_THROWS_AS(save_catalog(fixture(), db), Error);
    CHECK(read_text(db) == "not a database, but someone's file");
    CHECK(files_in(dir.path()) == 1);
  }
  SECTION("a bad data directory writes nothing (load first, then save)") {
    const fs::path db = dir.path() / "catalog.db";
    save_catalog(fixture(), db);
    const std::string before = read_text(db);
    const fs::path data =
        data_dir_with(dir, "gpus.json", [](nlohmann::ordered_json& doc) { doc["gpus"][0]["memory_gb"] = "80 GB"; });
    CHECK_THROWS_AS(save_catalog(Catalog::load_data_dir(data), db), Error);
    CHECK(read_text(db) == before);
  }
}

TEST_CASE("a database from a newer linkwise is refused", "[catalog][store]") {
  ScratchDir dir;
  const fs::path db = dir.path() / "catalog.db";
  save_catalog(fixture(), db);
  exec_sql(db,
           "UPDATE meta SET value = '" + std::to_string(kCatalogSchemaVersion + 1) + "' WHERE key = 'schema_version'");
  try {
    Catalog::open(db);
    FAIL("opened a newer schema");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::unsupported);
    CHECK_THAT(e.what(), Contains("newer linkwise"));
    CHECK_THAT(e.what(), Contains(db.string()));
  }
  CHECK_THROWS_AS(update_prices(db, {}), Error);
  CHECK_THROWS_AS(save_catalog(fixture(), db), Error);  // would silently downgrade the file
}

TEST_CASE("a SQLite file without the catalog tables is not a catalog", "[catalog][store]") {
  ScratchDir dir;
  const fs::path db = dir.path() / "other.db";
  exec_sql(db, "CREATE TABLE t (x INTEGER)");
  try {
    Catalog::open(db);
    FAIL("opened a foreign database");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::invalid_input);
    CHECK_THAT(e.what(), Contains("not a linkwise catalog database"));
  }
  CHECK_THROWS_AS(Catalog::open(dir.path() / "absent.db"), Error);
}

TEST_CASE("the embedded catalog is data/ as built", "[catalog][store][embedded]") {
  const Catalog embedded = Catalog::embedded();
  const Catalog from_data = Catalog::load_data_dir(LINKWISE_TEST_DATA_DIR);
  CHECK(embedded.gpus() == from_data.gpus());
  CHECK(embedded.instances() == from_data.instances());
  CHECK_FALSE(embedded_catalog_db_bytes().empty());

  ScratchDir dir;
  const fs::path db = dir.path() / "service.db";
  CHECK(ensure_catalog_db(db));
  CHECK(Catalog::open(db).instances() == embedded.instances());
  CHECK_FALSE(ensure_catalog_db(db));
  CHECK_THROWS_AS(write_embedded_db(db), Error);
  CHECK(files_in(dir.path()) == 1);
}

TEST_CASE("price updates are all or nothing", "[catalog][store]") {
  ScratchDir dir;
  const fs::path db = dir.path() / "catalog.db";
  save_catalog(fixture(), db);

  PriceUpdate update;
  update.instance_id = "lambda:gpu_8x_a100";
  update.price_usd_per_hour = 10.32;
  update.price_region = "us-east-1";
  update.price_as_of = "2026-11-30";
  update.regions = {"us-east-1", "us-west-1"};
  update.price_source = {"SkyPilot catalog", "2026-11-30", "test"};

  SECTION("applied") {
    update_prices(db, {update});
    const Catalog reopened = Catalog::open(db);
    const Instance& after = reopened.instance("lambda:gpu_8x_a100");
    CHECK(after.price_usd_per_hour == 10.32);
    CHECK(after.price_region == "us-east-1");
    CHECK(after.spot_price_usd_per_hour == std::nullopt);
    CHECK(after.regions == std::vector<std::string>{"us-east-1", "us-west-1"});
    CHECK(after.sources.at("price").url == "SkyPilot catalog");
    CHECK(after.sources.at("gpu") == fixture().instance("lambda:gpu_8x_a100").sources.at("gpu"));
  }
  SECTION("an unknown id rolls back the whole batch") {
    PriceUpdate unknown = update;
    unknown.instance_id = "lambda:gpu_99x_nothing";
    CHECK_THROWS_AS(update_prices(db, {update, unknown}), Error);
    CHECK(Catalog::open(db).instances() == fixture().instances());
  }
}

TEST_CASE("a database in WAL mode, as the service keeps it, is read and updated", "[catalog][store]") {
  ScratchDir dir;
  const fs::path db = dir.path() / "catalog.db";
  save_catalog(fixture(), db);
  exec_sql(db, "PRAGMA journal_mode=WAL");
  CHECK(query_text(db, "PRAGMA journal_mode") == "wal");

  PriceUpdate update;
  update.instance_id = "azure:Standard_NC4as_T4_v3";
  update.price_usd_per_hour = 0.5;
  update.price_region = "eastus";
  update.price_as_of = "2026-11-30";
  update.price_source = {"test", "2026-11-30", std::nullopt};
  update_prices(db, {update});
  CHECK(Catalog::open(db).instance("azure:Standard_NC4as_T4_v3").price_usd_per_hour == 0.5);
  CHECK(query_text(db, "PRAGMA journal_mode") == "wal");
}

TEST_CASE("the new fields survive the store, and the per-GPU price is a column", "[catalog][store]") {
  std::vector<Gpu> gpus = fixture().gpus();
  for (Gpu& gpu : gpus) {
    if (gpu.id == "H100-SXM5-80GB") {
      gpu.fp4_dense_tflops = 1979;  // test values, not catalog facts
      gpu.nvlink_domain_max_gpus = 8;
    }
  }
  std::vector<Instance> instances = fixture().instances();
  for (Instance& instance : instances) {
    if (instance.id == "azure:Standard_ND96isr_H100_v5") {
      instance.nvlink_domain_gpus = 8;
      instance.network_nics = 8;
      instance.network_nic_gbits_per_s = 400;
      instance.frontend_network_gbits_per_s = 100;
    }
  }
  const Catalog edited(gpus, instances);
  ScratchDir dir;
  const fs::path db = dir.path() / "catalog.db";
  save_catalog(edited, db);
  const Catalog reopened = Catalog::open(db);
  CHECK(reopened.gpus() == edited.gpus());
  CHECK(reopened.instances() == edited.instances());
  CHECK(query_text(db, "SELECT network_nics || 'x' || network_nic_gbits_per_s FROM instances"
                       " WHERE id = 'azure:Standard_ND96isr_H100_v5'") == "8x400.0");
  CHECK(query_text(db, "SELECT price_usd_per_gpu_hour FROM instances WHERE id = 'azure:Standard_NC64as_T4_v3'") ==
        "1.088");
  CHECK(query_text(db, "SELECT count(*) FROM instances WHERE price_usd_per_gpu_hour IS NULL") == "2");
}

TEST_CASE("a schema version 1 database is migrated when opened", "[catalog][store]") {
  ScratchDir dir;
  const fs::path db = dir.path() / "v1.db";
  // The version 1 schema as linkwise wrote it, with one GPU and one instance.
  exec_sql(db, R"sql(
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    INSERT INTO meta VALUES ('schema_version', '1');
    CREATE TABLE gpus (position INTEGER NOT NULL, id TEXT PRIMARY KEY, vendor TEXT NOT NULL,
      architecture TEXT NOT NULL, memory_gb REAL NOT NULL, hbm_gbytes_per_s REAL NOT NULL,
      bf16_dense_tflops REAL, fp16_dense_tflops REAL, fp8_dense_tflops REAL, nvlink_gbytes_per_s REAL,
      nvlink_generation INTEGER, pcie_gen INTEGER, tdp_w REAL);
    CREATE TABLE instances (position INTEGER NOT NULL, id TEXT PRIMARY KEY, provider TEXT NOT NULL,
      name TEXT NOT NULL, gpu_model TEXT NOT NULL REFERENCES gpus(id), gpu_count INTEGER NOT NULL,
      gpu_memory_gb REAL NOT NULL, vcpus INTEGER, memory_gib REAL, intra_node_fabric TEXT NOT NULL,
      nvlink_gbytes_per_s REAL, network_type TEXT NOT NULL, network_gbits_per_s REAL, gpudirect_rdma INTEGER,
      price_usd_per_hour REAL, price_region TEXT, price_as_of TEXT, spot_price_usd_per_hour REAL);
    CREATE TABLE instance_regions (instance_id TEXT NOT NULL REFERENCES instances(id) ON DELETE CASCADE,
      position INTEGER NOT NULL, region TEXT NOT NULL, PRIMARY KEY (instance_id, region));
    CREATE TABLE sources (owner_kind TEXT NOT NULL CHECK (owner_kind IN ('gpu', 'instance')),
      owner_id TEXT NOT NULL, fact_group TEXT NOT NULL, url TEXT NOT NULL, as_of TEXT NOT NULL, note TEXT,
      PRIMARY KEY (owner_kind, owner_id, fact_group));
    INSERT INTO gpus VALUES (0, 'H100-SXM5-80GB', 'nvidia', 'hopper', 80, 3350, 989, 989, 1979, 900, 4, 5, 700);
    INSERT INTO instances VALUES (0, 'aws:p5.48xlarge', 'aws', 'p5.48xlarge', 'H100-SXM5-80GB', 8, 80, 192, 2048,
      'nvswitch', 900, 'efa', 3200, 1, 55.04, 'us-east-1', '2026-11-30', NULL);
    CREATE TABLE probe_reports (id INTEGER PRIMARY KEY, body TEXT);
  )sql");

  const Catalog migrated = Catalog::open(db);
  CHECK(query_text(db, "SELECT value FROM meta WHERE key = 'schema_version'") == std::to_string(kCatalogSchemaVersion));
  const Instance& p5 = migrated.instance("aws:p5.48xlarge");
  CHECK(p5.network_gbits_per_s == 3200);
  CHECK_FALSE(p5.nvlink_domain_gpus);  // unknown until the next build from data/
  CHECK_FALSE(p5.network_nics);
  CHECK_FALSE(p5.frontend_network_gbits_per_s);
  CHECK(p5.price_usd_per_gpu_hour() == Approx(6.88));
  CHECK_FALSE(migrated.gpu("H100-SXM5-80GB").fp4_dense_tflops);
  CHECK(query_text(db, "SELECT price_usd_per_gpu_hour FROM instances") == "6.88");
  CHECK(query_text(db, "SELECT count(*) FROM probe_reports") == "0");  // other tables are kept

  // A migrated file takes price updates like a fresh one.
  PriceUpdate update;
  update.instance_id = "aws:p5.48xlarge";
  update.price_usd_per_hour = 40;
  update.price_region = "us-east-1";
  update.price_as_of = "2026-12-01";
  update.price_source = {"test", "2026-12-01", std::nullopt};
  update_prices(db, {update});
  CHECK(query_text(db, "SELECT price_usd_per_gpu_hour FROM instances") == "5.0");
}
