#include "json_py.hpp"

#include <cmath>

#include "linkwise/error.hpp"
#include "linkwise/json_input.hpp"

namespace py = pybind11;
using nlohmann::json;

namespace linkwise::bindings {

namespace {

template <class Json>
py::object convert(const Json& value) {
  using value_t = nlohmann::detail::value_t;
  switch (value.type()) {
    case value_t::null: return py::none();
    case value_t::boolean: return py::bool_(value.template get<bool>());
    case value_t::number_integer: return py::int_(value.template get<std::int64_t>());
    case value_t::number_unsigned: return py::int_(value.template get<std::uint64_t>());
    case value_t::number_float: return py::float_(value.template get<double>());
    case value_t::string: return py::str(value.template get_ref<const std::string&>());
    case value_t::array: {
      py::list out(value.size());
      std::size_t i = 0;
      for (const auto& item : value) out[i++] = convert(item);
      return out;
    }
    case value_t::object: {
      py::dict out;
      for (const auto& [key, item] : value.items()) out[py::str(key)] = convert(item);
      return out;
    }
    case value_t::binary:
    case value_t::discarded: break;
  }
  throw Error(ErrorKind::internal, "core returned a JSON value with no Python equivalent");
}

}  // namespace

py::object to_python(const json& value) { return convert(value); }
py::object to_python(const nlohmann::ordered_json& value) { return convert(value); }

std::string text_from_python(py::handle value, const std::string& field) {
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(value.ptr(), &size);
  if (!data) {
    PyErr_Clear();
    const std::string where = field.empty() ? std::string("document") : field;
    throw_invalid(field, where + ": not valid Unicode text (a lone surrogate such as \\ud800 has no UTF-8 form)");
  }
  return std::string(data, static_cast<std::size_t>(size));
}

namespace {

json from_python_at(py::handle value, const std::string& field, int depth) {
  // Paths are relative to the document, as the core names fields ("job.seq_len"); the root is
  // called "document" in messages.
  const std::string where = field.empty() ? std::string("document") : field;
  if (value.is_none()) return nullptr;
  // bool before int: Python's bool is an int subclass.
  if (py::isinstance<py::bool_>(value)) return value.cast<bool>();
  if (py::isinstance<py::int_>(value)) {
    try {
      return value.cast<std::int64_t>();
    } catch (const py::cast_error&) {
      throw_invalid(field, where + ": integer " + py::str(value).cast<std::string>() + " is out of the 64-bit range");
    }
  }
  if (py::isinstance<py::float_>(value)) {
    const double number = value.cast<double>();
    if (!std::isfinite(number))
      throw_invalid(field, where + ": expected a finite number, got " + py::repr(value).cast<std::string>());
    return number;
  }
  if (py::isinstance<py::str>(value)) return text_from_python(value, field);
  const bool structured =
      py::isinstance<py::dict>(value) || py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value);
  // The same bound as the CLI and REST (core's json_input.hpp), checked before recursing deeper.
  if (structured && depth >= kMaxJsonDepth)
    throw_invalid(field, where + ": nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  if (py::isinstance<py::dict>(value)) {
    json out = json::object();
    for (const auto& [key, item] : value.cast<py::dict>()) {
      if (!py::isinstance<py::str>(key))
        throw_invalid(field, where + ": object keys must be strings, got " + py::repr(key).cast<std::string>());
      const auto name = text_from_python(key, field.empty() ? std::string("document") : field);
      out[name] = from_python_at(item, field.empty() ? name : field + "." + name, depth + 1);
    }
    return out;
  }
  if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
    json out = json::array();
    std::size_t i = 0;
    for (const auto& item : value)
      out.push_back(from_python_at(item, where + "[" + std::to_string(i++) + "]", depth + 1));
    return out;
  }
  throw_invalid(field, where + ": expected a JSON value (dict, list, str, number, bool or None), got " +
                           std::string(py::str(py::type::handle_of(value).attr("__name__"))));
}

}  // namespace

json from_python(py::handle value, const std::string& field) { return from_python_at(value, field, 0); }

}  // namespace linkwise::bindings
