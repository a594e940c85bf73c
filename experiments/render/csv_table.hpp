// A CSV file whose columns are named where their values are written, so that its header and its
// rows cannot drift apart: each row is a sequence of (name, value) cells, the first row's names
// make the header, and every later row must name the same columns in the same order. Also the
// quoting and number format of every CSV the report writes. No LibTorch.
//
//   CsvTable csv;
//   for (const auto& r : rows) csv.field("workload", r.workload).number("loss", r.loss).end_row();
//   return csv.text();  // "workload,loss\n..." ("" without rows)
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace fp8lab::experiments {

// RFC 4180 quoting where needed; numbers with 9 significant digits, empty when absent.
std::string csv_field(const std::string& text);
std::string csv_number(std::optional<double> value);

class CsvTable {
 public:
  CsvTable& cell(const std::string& name, std::string text);  // `text` as written
  CsvTable& field(const std::string& name, const std::string& text) {
    return cell(name, csv_field(text));
  }
  CsvTable& number(const std::string& name, std::optional<double> value) {
    return cell(name, csv_number(value));
  }
  CsvTable& count(const std::string& name, std::size_t value) {
    return cell(name, std::to_string(value));
  }
  // Ends the row; std::logic_error names the first column where a row's names differ from the
  // header's.
  void end_row();
  std::string text() const;

 private:
  std::vector<std::string> header_;
  std::size_t column_ = 0;  // of the row being written
  std::string row_, text_;  // text_ is empty until the first row (and the header) ends
};

}  // namespace fp8lab::experiments
