// Assembles the served OpenAPI document (openapi.hpp).
#include "server/openapi.hpp"

#include <nlohmann/json.hpp>

namespace linkwise::server {

namespace {

using ordered_json = nlohmann::ordered_json;

// "#/$defs/stats" -> "#/components/schemas/ProbeReport_stats", everywhere in `node`.
void move_refs(ordered_json& node) {
  static constexpr std::string_view kDefs = "#/$defs/";
  if (node.is_object()) {
    for (auto& [key, value] : node.items()) {
      if (key == "$ref" && value.is_string() && value.get<std::string>().rfind(kDefs, 0) == 0)
        value = "#/components/schemas/ProbeReport_" + value.get<std::string>().substr(kDefs.size());
      else move_refs(value);
    }
  } else if (node.is_array()) {
    for (auto& value : node) move_refs(value);
  }
}

}  // namespace

std::string assemble_openapi(std::string_view document, std::string_view workload_schema,
                             std::string_view probe_report_schema) {
  ordered_json doc = ordered_json::parse(document);
  const ordered_json workload = ordered_json::parse(workload_schema);
  ordered_json probe_report = ordered_json::parse(probe_report_schema);
  ordered_json& schemas = doc.at("components").at("schemas");

  // Workload: the document's description and externalDocs around the data schema's body.
  const ordered_json placeholder = schemas.at("Workload");
  ordered_json merged;
  merged["description"] = placeholder.at("description");
  for (const auto& [key, value] : workload.items())
    if (key != "$schema" && key != "$id" && key != "title" && key != "description") merged[key] = value;
  merged["externalDocs"] = placeholder.at("externalDocs");

  // ProbeReport: the data schema whole, its definitions as sibling components.
  ordered_json defs = probe_report.contains("$defs") ? probe_report.at("$defs") : ordered_json::object();
  probe_report.erase("$schema");
  probe_report.erase("$id");
  probe_report.erase("$defs");
  move_refs(probe_report);

  // Rebuilt in the document's order, the definitions right after ProbeReport.
  ordered_json rebuilt = ordered_json::object();
  for (auto& [name, schema] : schemas.items()) {
    if (name == "Workload") {
      rebuilt[name] = merged;
    } else if (name == "ProbeReport") {
      rebuilt[name] = probe_report;
      for (auto& [def_name, definition] : defs.items()) {
        move_refs(definition);
        rebuilt["ProbeReport_" + def_name] = definition;
      }
    } else {
      rebuilt[name] = schema;
    }
  }
  schemas = std::move(rebuilt);
  return doc.dump(1);
}

}  // namespace linkwise::server
