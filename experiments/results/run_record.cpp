#include "experiments/results/run_record.hpp"

#include <cmath>
#include <set>
#include <stdexcept>
#include <type_traits>

namespace fp8lab::experiments {

const Field<double>& FinalFigures::underflow_fraction(const std::string& tensor) const {
  if (tensor == "input") return input_underflow_fraction;
  if (tensor == "weight") return weight_underflow_fraction;
  if (tensor == "grad_output") return grad_output_underflow_fraction;
  throw std::invalid_argument("underflow_fraction: '" + tensor +
                              "'; accepted: input, weight, grad_output");
}

std::string RunRecord::recipe_value(const std::string& field) const {
  if (!recipe.has_value()) return "";
  const auto it = recipe->find(field);
  return it == recipe->end() ? "" : it->second;
}

std::optional<double> RunRecord::workload_option_number(const std::string& option) const {
  const auto it = other.find("workload_options");
  if (it == other.end() || !it->is_object()) return std::nullopt;
  const auto value = it->find(option);
  if (value == it->end() || !value->is_number()) return std::nullopt;
  return value->get<double>();
}

std::optional<std::string> RunRecord::instability_description() const {
  const auto it = other.find("instability");
  if (it == other.end() || !it->is_object()) return std::nullopt;
  const auto text = it->find("description");
  if (text == it->end() || !text->is_string()) return std::nullopt;
  return text->get<std::string>();
}

namespace {

// A struct of the record with a field table (T::fields) and an `other` object.
template <class T>
concept RecordPart = requires(T& t) {
  t.other;
};

template <class T>
struct IsVector : std::false_type {};
template <class T>
struct IsVector<std::vector<T>> : std::true_type {};
template <class T>
struct IsStringMap : std::false_type {};
template <class T>
struct IsStringMap<std::map<std::string, T>> : std::true_type {};

// ---- reading: `where` is the field's JSON pointer, for the error message.

[[noreturn]] void wrong_type(const std::string& where, const nlohmann::json& j, const char* want) {
  throw std::invalid_argument("run record field " + where + ": expected " + want + ", got " +
                              std::string(j.type_name()));
}

template <class T>
void read(const nlohmann::json& j, T& out, const std::string& where);

template <RecordPart T>
void read_part(const nlohmann::json& j, T& out, const std::string& where) {
  if (!j.is_object()) wrong_type(where, j, "an object");
  std::set<std::string> typed;
  T::fields(out, [&](const char* key, auto& member) {
    typed.insert(key);
    if (const auto it = j.find(key); it != j.end()) read(*it, member, where + "/" + key);
  });
  for (const auto& [key, value] : j.items()) {
    if (typed.count(key) == 0) out.other[key] = value;
  }
}

template <class T>
void read(const nlohmann::json& j, T& out, const std::string& where) {
  if constexpr (RecordPart<T>) {
    read_part(j, out, where);
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!j.is_string()) wrong_type(where, j, "a string");
    out = j.get<std::string>();
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!j.is_boolean()) wrong_type(where, j, "a boolean");
    out = j.get<bool>();
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    if (!j.is_number_integer()) wrong_type(where, j, "an integer");
    out = j.get<std::int64_t>();
  } else if constexpr (std::is_same_v<T, double>) {
    if (!j.is_number()) wrong_type(where, j, "a number");
    out = j.get<double>();
  } else if constexpr (std::is_same_v<T, std::vector<double>>) {
    if (!j.is_array()) wrong_type(where, j, "an array");
    out.clear();
    for (const auto& v : j) {
      if (!v.is_null() && !v.is_number()) wrong_type(where, v, "numbers or null");
      out.push_back(v.is_null() ? NAN : v.get<double>());
    }
  } else if constexpr (IsStringMap<T>::value) {
    if (!j.is_object()) wrong_type(where, j, "an object");
    out.clear();
    for (const auto& [key, value] : j.items()) read(value, out[key], where + "/" + key);
  } else if constexpr (IsVector<T>::value) {
    if (!j.is_array()) wrong_type(where, j, "an array");
    out.assign(j.size(), {});
    for (std::size_t i = 0; i < j.size(); ++i) read(j[i], out[i], where + "/" + std::to_string(i));
  } else {
    // Field<U>
    if (j.is_null()) {
      out = T::null();
    } else {
      read(j, out.set(), where);
    }
  }
}

// ---- writing

template <class T>
nlohmann::json write(const T& value);

template <class T>
void write_member(nlohmann::json& object, const char* key, const T& value) {
  object[key] = write(value);
}

template <class T>
void write_member(nlohmann::json& object, const char* key, const Field<T>& value) {
  if (!value.present()) return;
  object[key] = value.is_null() ? nlohmann::json(nullptr) : write(*value);
}

template <class T>
nlohmann::json write(const T& value) {
  if constexpr (RecordPart<T>) {
    nlohmann::json object = nlohmann::json::object();
    object.update(value.other);
    T::fields(value,
              [&](const char* key, const auto& member) { write_member(object, key, member); });
    return object;
  } else if constexpr (std::is_same_v<T, std::vector<double>>) {
    auto array = nlohmann::json::array();
    for (const double v : value) {
      array.push_back(std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v));
    }
    return array;
  } else if constexpr (IsVector<T>::value) {
    if constexpr (RecordPart<typename T::value_type>) {
      auto array = nlohmann::json::array();
      for (const auto& item : value) array.push_back(write(item));
      return array;
    } else {
      return nlohmann::json(value);
    }
  } else {
    return nlohmann::json(value);
  }
}

}  // namespace

RunRecord run_record_from_json(const nlohmann::json& json) {
  RunRecord record;
  read(json, record, "");
  return record;
}

nlohmann::json to_json(const RunRecord& record) { return write(record); }

nlohmann::json to_json(const LayerRow& row) { return write(row); }

nlohmann::json to_json(const Machine& machine) { return write(machine); }

void add_record_fields(RunRecord& record, const nlohmann::json& fields) {
  read_part(fields, record, "");
}

void write_run_record(const ResultsDirectory& directory, const RunRecord& record) {
  directory.write_run_record(to_json(record));
}

}  // namespace fp8lab::experiments
