#include "experiments/render/csv_table.hpp"

#include <stdexcept>

#include "experiments/stats/report_data.hpp"

namespace fp8lab::experiments {

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string csv_number(std::optional<double> v) {
  return v ? format_number(v, "%.9g") : std::string();
}

CsvTable& CsvTable::cell(const std::string& name, std::string text) {
  if (text_.empty()) {
    header_.push_back(name);
  } else if (column_ >= header_.size() || header_[column_] != name) {
    throw std::logic_error("CSV row: column " + std::to_string(column_ + 1) + " is '" + name +
                           "', the header's is '" +
                           (column_ < header_.size() ? header_[column_] : "(none)") + "'");
  }
  row_ += (column_++ == 0 ? "" : ",") + text;
  return *this;
}

void CsvTable::end_row() {
  if (!text_.empty() && column_ != header_.size()) {
    throw std::logic_error("CSV row: " + std::to_string(column_) + " columns, the header has " +
                           std::to_string(header_.size()));
  }
  if (text_.empty()) {
    for (std::size_t i = 0; i < header_.size(); ++i) text_ += (i == 0 ? "" : ",") + header_[i];
    text_ += '\n';
  }
  text_ += row_ + '\n';
  row_.clear();
  column_ = 0;
}

std::string CsvTable::text() const { return text_; }

}  // namespace fp8lab::experiments
