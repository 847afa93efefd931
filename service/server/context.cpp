#include "server/context.hpp"

#include <nlohmann/json.hpp>

namespace linkwise::server {

Context::Context(Catalog catalog_snapshot, Database& database)
    : catalog(std::move(catalog_snapshot)), db(database), keys(database), reports(database) {
  // ordered_json keeps the contract's field order, the same as `linkwise instances --json`.
  instance_json.reserve(catalog.instances().size());
  for (const auto& instance : catalog.instances())
    instance_json.push_back(encode_body(nlohmann::ordered_json(instance).dump()));
  gpus_body = encode_body(gpus_json(catalog.gpus()).dump());

  metrics.set_gauge("linkwise_catalog_instances", "Instance types in the served catalog.",
                    static_cast<double>(catalog.instances().size()));
  metrics.set_gauge("linkwise_catalog_gpus", "GPU models in the served catalog.",
                    static_cast<double>(catalog.gpus().size()));
}

}  // namespace linkwise::server
