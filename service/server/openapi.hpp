// The served OpenAPI document, assembled once from service/openapi.json and the two data schemas
// it serves as components, so each schema has one home: data/schema/.
#pragma once

#include <string>
#include <string_view>

namespace linkwise::server {

// `document` with components.schemas.Workload filled from `workload_schema` (its own description
// and externalDocs kept, the schema's $schema, $id, title and description dropped) and
// components.schemas.ProbeReport from `probe_report_schema` (its $defs become ProbeReport_<name>,
// their $refs rewritten to point there). Throws on malformed input: a build defect, caught by the
// REST tests.
std::string assemble_openapi(std::string_view document, std::string_view workload_schema,
                             std::string_view probe_report_schema);

}  // namespace linkwise::server
