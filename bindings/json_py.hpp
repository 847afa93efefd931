// nlohmann::json <-> Python objects, the one conversion the bindings need: the core speaks the
// JSON contract, Python sees plain dicts, lists, str, int, float, bool and None.
#pragma once

#include <string>

#include <pybind11/pybind11.h>
#include <nlohmann/json.hpp>

namespace linkwise::bindings {

// Both JSON flavours of the core: json (sorted keys) and ordered_json (contract field order,
// which the Python dicts keep).
pybind11::object to_python(const nlohmann::json& value);
pybind11::object to_python(const nlohmann::ordered_json& value);

// `field` is the path of `value` in an invalid_input error, "" for a whole document, so a bad
// value deep inside a dict is reported where the core would name it ("job.seq_len"). Accepts dict (str keys), list,
// tuple, str, int, float (finite), bool and None; anything else is invalid_input.
nlohmann::json from_python(pybind11::handle value, const std::string& field);

// A Python str as UTF-8. A str that has no UTF-8 form (a lone surrogate, "\ud800") is
// invalid_input naming `field` (InvalidInputError), never pybind11's "Unable to cast".
std::string text_from_python(pybind11::handle value, const std::string& field);

}  // namespace linkwise::bindings
