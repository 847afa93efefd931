// linkwise._core: the pybind11 module under the Python package. Thin on purpose: it converts
// arguments, calls core/, converts results (JSON contract -> dicts) and maps linkwise::Error to
// the Python exceptions of linkwise._errors. Every rule lives in core/.
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "json_py.hpp"
#include "linkwise/catalog.hpp"
#include "linkwise/catalog_db.hpp"
#include "linkwise/error.hpp"
#include "linkwise/json_input.hpp"
#include "linkwise/planner.hpp"
#include "linkwise/probe_report.hpp"
#include "linkwise/probes.hpp"

namespace py = pybind11;
using linkwise::bindings::from_python;
using linkwise::bindings::text_from_python;
using linkwise::bindings::to_python;
using nlohmann::json;

namespace linkwise {
namespace {

// ---- arguments: a None means "not given"; a wrong type is invalid_input naming the argument ----
// Only types are checked here; the values (bounds >= 0, finite) are checked by core's
// validate(InstanceFilter), whose field names are these keyword names.

std::string type_name(py::handle value) { return py::str(py::type::handle_of(value).attr("__name__")); }

std::optional<std::string> optional_str(py::handle value, const char* field) {
  if (value.is_none()) return std::nullopt;
  if (!py::isinstance<py::str>(value))
    throw_invalid(field, std::string(field) + ": expected a string, got " + type_name(value));
  return text_from_python(value, field);
}

std::optional<int> optional_int(py::handle value, const char* field) {
  if (value.is_none()) return std::nullopt;
  if (py::isinstance<py::bool_>(value) || !py::isinstance<py::int_>(value))
    throw_invalid(field, std::string(field) + ": expected an integer, got " + type_name(value));
  int number = 0;
  try {
    number = value.cast<int>();
  } catch (const py::cast_error&) {
    throw_invalid(field, std::string(field) + ": integer out of range");
  }
  return number;
}

std::optional<double> optional_number(py::handle value, const char* field) {
  if (value.is_none()) return std::nullopt;
  if (py::isinstance<py::bool_>(value) || !(py::isinstance<py::int_>(value) || py::isinstance<py::float_>(value)))
    throw_invalid(field, std::string(field) + ": expected a number, got " + type_name(value));
  return value.cast<double>();
}

std::optional<bool> optional_bool(py::handle value, const char* field) {
  if (value.is_none()) return std::nullopt;
  if (!py::isinstance<py::bool_>(value))
    throw_invalid(field, std::string(field) + ": expected True or False, got " + type_name(value));
  return value.cast<bool>();
}

// ---- catalog ----

py::list instance_dicts(const std::vector<const Instance*>& instances) {
  py::list out(instances.size());
  for (std::size_t i = 0; i < instances.size(); ++i) out[i] = to_python(nlohmann::ordered_json(*instances[i]));
  return out;
}

// {"total", "excluded_unknown": {field: count}, "items": [instance dicts]} as the CLI and REST print
// it: the matches and what the filters hid for want of a value (Catalog::match).
py::dict query_instances(const Catalog& catalog, py::object gpu, py::object min_gpus, py::object fabric,
                         py::object provider, py::object max_price, py::object min_gpu_memory_gb,
                         py::object min_nvlink_gbytes_per_s, py::object min_network_gbits_per_s, py::object rdma,
                         py::object region, py::object sort) {
  InstanceFilter filter;
  filter.gpu = optional_str(gpu, "gpu");
  filter.min_gpus = optional_int(min_gpus, "min_gpus");
  if (auto text = optional_str(fabric, "fabric")) filter.fabric = parse_fabric(*text, "fabric");
  filter.provider = optional_str(provider, "provider");
  filter.max_price = optional_number(max_price, "max_price");
  filter.min_gpu_memory_gb = optional_number(min_gpu_memory_gb, "min_gpu_memory_gb");
  filter.min_nvlink_gbytes_per_s = optional_number(min_nvlink_gbytes_per_s, "min_nvlink_gbytes_per_s");
  filter.min_network_gbits_per_s = optional_number(min_network_gbits_per_s, "min_network_gbits_per_s");
  filter.rdma = optional_bool(rdma, "rdma");
  filter.region = optional_str(region, "region");
  const InstanceSort order = InstanceSort::parse(optional_str(sort, "sort").value_or("id"));

  InstanceMatches found;
  {
    py::gil_scoped_release release;
    found = catalog.match(filter, order);
  }
  py::dict out = to_python(matches_summary_json(found));
  out["items"] = instance_dicts(found.instances);
  return out;
}

py::list gpu_dicts(const Catalog& catalog) {
  py::list out(catalog.gpus().size());
  for (std::size_t i = 0; i < catalog.gpus().size(); ++i) out[i] = to_python(nlohmann::ordered_json(catalog.gpus()[i]));
  return out;
}

void bind_catalog(py::module_& m) {
  py::class_<Catalog, std::shared_ptr<Catalog>>(m, "Catalog", "The instance catalog held in memory (core Catalog).")
      .def_static(
          "embedded", [] { return std::make_shared<Catalog>(Catalog::embedded()); },
          "The catalog built into the library (data/ loaded at build time).")
      .def_static(
          "open",
          [](const std::string& path) {
            py::gil_scoped_release release;
            return std::make_shared<Catalog>(Catalog::open(path));
          },
          py::arg("path"), "A SQLite catalog database written by the build step or save().")
      .def_static(
          "load_data_dir",
          [](const std::string& path) {
            py::gil_scoped_release release;
            return std::make_shared<Catalog>(Catalog::load_data_dir(path));
          },
          py::arg("data_dir"), "The reviewed text files: data_dir/gpus.json and data_dir/instances/*.json.")
      .def("instances", &query_instances, py::kw_only(), py::arg("gpu") = py::none(), py::arg("min_gpus") = py::none(),
           py::arg("fabric") = py::none(), py::arg("provider") = py::none(), py::arg("max_price") = py::none(),
           py::arg("min_gpu_memory_gb") = py::none(), py::arg("min_nvlink_gbytes_per_s") = py::none(),
           py::arg("min_network_gbits_per_s") = py::none(), py::arg("rdma") = py::none(),
           py::arg("region") = py::none(), py::arg("sort") = py::none(),
           "Instances matching every given filter, as contract dicts, sorted: {'total': n, "
           "'excluded_unknown': {field: count}, 'items': [...]}.")
      .def(
          "save",
          [](const Catalog& c, const std::string& path) {
            py::gil_scoped_release release;
            save_catalog(c, path);
          },
          py::arg("path"), "Writes the catalog to a SQLite database file, atomically.")
      .def("gpus", &gpu_dicts, "Every GPU model, as contract dicts.")
      .def(
          "instance",
          [](const Catalog& c, const py::str& id) {
            return to_python(nlohmann::ordered_json(c.instance(text_from_python(id, "id"))));
          },
          py::arg("id"), "One instance by id (\"aws:p5.48xlarge\"); not_found when unknown.")
      .def(
          "gpu",
          [](const Catalog& c, const py::str& id) {
            return to_python(nlohmann::ordered_json(c.gpu(text_from_python(id, "id"))));
          },
          py::arg("id"), "One GPU model by id (\"H100-SXM5-80GB\"); not_found when unknown.")
      .def("instance_count", [](const Catalog& c) { return c.instances().size(); })
      .def("gpu_count", [](const Catalog& c) { return c.gpus().size(); });
}

// ---- probe reports ----

probe::ProbeReport report_from_python(py::handle document) {
  const json parsed = from_python(document, "");
  py::gil_scoped_release release;
  return probe::parse_report(parsed);
}

py::object load_report(const std::string& path) {
  json document;
  {
    py::gil_scoped_release release;
    document = probe::to_json(probe::load_report(path));
  }
  return to_python(document);
}

py::object parse_report(py::handle document) { return to_python(probe::to_json(report_from_python(document))); }

py::object validate_report(py::handle document, const Catalog& catalog, std::optional<std::string> instance) {
  const probe::ProbeReport report = report_from_python(document);
  json verdicts;
  {
    py::gil_scoped_release release;
    verdicts = probe::validate_json(report, catalog, std::move(instance));
  }
  return to_python(verdicts);
}

py::object validate_fleet(py::list documents, const Catalog& catalog, std::optional<std::string> instance,
                          bool include_synthetic) {
  std::vector<probe::ProbeReport> reports;
  for (py::handle document : documents) reports.push_back(report_from_python(document));
  nlohmann::ordered_json fleet;
  {
    py::gil_scoped_release release;
    fleet = probe::to_json(probe::validate_fleet(reports, catalog, std::move(instance), include_synthetic));
  }
  return to_python(fleet);
}

// ---- planner: JSON in, JSON out; a probe report's measured links replace the catalog's claims ----

std::optional<MeasuredLinks> measured_from(py::handle report, const Catalog& catalog) {
  if (report.is_none()) return std::nullopt;
  const probe::ProbeReport parsed = report_from_python(report);
  return probe::measured_links(parsed, catalog);
}

// A JSON file read and parsed as the CLI reads its files (read_json_file): at most
// kMaxDocumentBytes, so a wrong path such as /dev/zero is an error naming the field, not a hang.
py::object read_json(const std::string& path, const std::string& field) {
  json document;
  {
    py::gil_scoped_release release;
    document = read_json_file(path, field);
  }
  return to_python(document);
}

void check_workload(py::handle workload, const Catalog& catalog) {
  const json document = from_python(workload, "");
  py::gil_scoped_release release;
  (void)planner::parse_workload(document, catalog);
}

py::object models() { return to_python(planner::models_json()["models"]); }

py::object plan(py::handle workload, const Catalog& catalog, py::handle report) {
  const json document = from_python(workload, "");
  const std::optional<MeasuredLinks> measured = measured_from(report, catalog);
  json result;
  {
    py::gil_scoped_release release;
    result = planner::plan_json(document, catalog, measured ? &*measured : nullptr);
  }
  return to_python(result);
}

py::object recommend(py::handle workload, const Catalog& catalog, int top_k, py::handle report,
                     const std::string& per) {
  const json document = from_python(workload, "");
  const std::optional<MeasuredLinks> measured = measured_from(report, catalog);
  const planner::Grouping grouping = planner::parse_grouping(per, "per");
  json result;
  {
    py::gil_scoped_release release;
    result = planner::recommend_json(document, catalog, top_k, measured ? &*measured : nullptr, grouping);
  }
  return to_python(result);
}

// ---- probes: run on this machine where the build has them ----

py::object run_probes_here(bool quick, std::optional<std::vector<std::string>> only) {
  probe::ProbeOptions options;
  options.quick = quick;
  options.only = only.value_or(std::vector<std::string>{});
  options.progress = [](std::string_view line) { std::cerr << "linkwise probe: " << line << "\n"; };
  json report;
  {
    // Minutes of GPU work: other Python threads keep running. A bad name is invalid_input; a probe
    // this build lacks, or no GPU, is unsupported (the probes library's messages).
    py::gil_scoped_release release;
    report = probe::run_probes(options);
  }
  return to_python(report);
}

// ---- errors: linkwise::Error -> linkwise._errors.<class>, message unchanged ----

void register_error_translator() {
  // Held for the life of the process: the translator runs until interpreter shutdown.
  static PyObject* const from_core =
      py::module_::import("linkwise._errors").attr("_from_core").cast<py::object>().release().ptr();
  py::register_exception_translator([](std::exception_ptr thrown) {
    try {
      if (thrown) std::rethrow_exception(thrown);
    } catch (const Error& error) {
      py::object exception = py::reinterpret_borrow<py::object>(from_core)(std::string(to_string(error.kind())),
                                                                           error.message(), error.field());
      PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exception.ptr())), exception.ptr());
    } catch (const nlohmann::json::exception& error) {
      // A JSON access the core did not guard: still a bad document, reported as such.
      py::object exception = py::reinterpret_borrow<py::object>(from_core)("invalid_input", error.what(), "");
      PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exception.ptr())), exception.ptr());
    }
  });
}

}  // namespace
}  // namespace linkwise

PYBIND11_MODULE(_core, m) {
  m.doc() = "linkwise's compiled core; use the linkwise package, not this module.";
  linkwise::register_error_translator();
  linkwise::bind_catalog(m);
  m.def("read_json", &linkwise::read_json, py::arg("path"), py::arg("field"),
        "Reads and parses a JSON file as the CLI does (at most 4 MiB); raises naming the field.");
  m.def("check_workload", &linkwise::check_workload, py::arg("workload"), py::arg("catalog"),
        "Checks a workload document as plan/recommend read it; raises naming the field.");
  m.def("models", &linkwise::models, "The planner's model presets, as contract dicts (linkwise models --json).");
  m.def("plan", &linkwise::plan, py::arg("workload"), py::arg("catalog"), py::arg("report") = py::none(),
        "Evaluates the workload's layout (linkwise plan --json).");
  m.def("recommend", &linkwise::recommend, py::arg("workload"), py::arg("catalog"), py::arg("top"),
        py::arg("report") = py::none(), py::arg("per") = "none",
        "Searches instances and layouts (linkwise recommend --json).");
  m.attr("__version__") = LINKWISE_VERSION;
  m.attr("default_top") = linkwise::planner::kDefaultTop;
  m.attr("min_top") = linkwise::planner::kMinTop;
  m.attr("max_top") = linkwise::planner::kMaxTop;
  m.def("load_report", &linkwise::load_report, py::arg("path"),
        "Reads and checks a probe report file; returns its JSON document.");
  m.def("parse_report", &linkwise::parse_report, py::arg("document"),
        "Checks a probe report document; returns it as the core writes it.");
  m.def("validate", &linkwise::validate_report, py::arg("report"), py::arg("catalog"), py::arg("instance") = py::none(),
        "Each catalog claim against the report (linkwise validate).");
  m.def("validate_fleet", &linkwise::validate_fleet, py::arg("reports"), py::arg("catalog"),
        py::arg("instance") = py::none(), py::arg("include_synthetic") = false,
        "The fleet verdict over reports of one instance type (linkwise validate --fleet).");
  m.def("probe", &linkwise::run_probes_here, py::arg("quick"), py::arg("only") = py::none(),
        "Runs the link probes on this machine; unsupported without CUDA probes or a GPU.");
  m.attr("has_probes") = linkwise::probe::has_gpu_probes();
}
