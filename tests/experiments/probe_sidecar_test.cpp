// The probe sidecar (experiments/results/probe_sidecar.hpp) and the record field that names it:
// - rows read back as written, NaN and infinities included, and an empty run's file is valid; a
//   file older than the wgrad_* columns reads them as NaN;
// - a file that is not Parquet, one with a column missing or of another type, and one with a
//   direction or variant the report does not know are refused, naming the file and the column;
// - a record's probe_sidecar survives to_json, and an older record without it reads as absent.
#include <arrow/api.h>
#include <arrow/io/file.h>
#include <parquet/arrow/writer.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "experiments/results/probe_sidecar.hpp"
#include "experiments/results/run_record.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/report_records.hpp"

using namespace fp8lab::experiments;

namespace {

std::vector<ProbeRow> some_rows() {
  std::vector<ProbeRow> rows;
  const char* variants[] = {kAllGemms, kFpropOnly, kDgradOnly, kWgradOnly};
  for (int i = 0; i < 6; ++i) {
    ProbeRow row;
    row.step = 10 * i;
    row.direction = i == 5 ? kExactOnRun : kOnBaseline;
    row.recipe = i % 2 ? "nvfp4 rht" : "e4m3 delayed";
    row.variant = variants[i % 4];
    row.draw = i == 2 ? kMeanOfDraws : i % 2;
    row.tensor = i == 0 ? kWholeModel : "blocks.0.mlp.fc1.weight";
    row.loss = 3.25 + i;
    row.reference_loss = 3.0 + i;
    row.grad_norm = 0x1p-7 * (i + 1);
    row.error_norm = 1e-4;
    row.cosine = 0.999;
    row.rel_error = 0.0125 * i;
    row.bias = -0.003;
    row.noise = 0.0124;
    row.chmiel_ratio = i == 3 ? std::numeric_limits<double>::infinity() : 80.0;
    row.update_cosine = 0.98;
    row.update_rel_error = 0.2;
    row.draw_spread = row.draw == kMeanOfDraws ? 0.01 : std::numeric_limits<double>::quiet_NaN();
    if (i == 1) {  // an NVFP4 recipe's weight row: the RHT columns (NaN elsewhere by default)
      row.wgrad_input_crest = 1.25;
      row.wgrad_input_crest_rht = 2.0625;
      row.wgrad_input_rel_error = 0.125;
      row.wgrad_input_rel_error_rht = 0.09375;
      row.wgrad_grad_crest = 3.5;
      row.wgrad_grad_crest_rht = 1.75;
      row.wgrad_grad_rel_error = 0.0625;
      row.wgrad_grad_rel_error_rht = 0.078125;
    }
    rows.push_back(row);
  }
  return rows;
}

bool same(double a, double b) { return std::isnan(a) ? std::isnan(b) : a == b; }

// A Parquet file of one double column `name` (another sidecar's, or a corrupt one).
void write_one_column(const std::filesystem::path& path, const char* name,
                      const std::shared_ptr<arrow::DataType>& type) {
  arrow::DoubleBuilder doubles;
  arrow::StringBuilder strings;
  std::shared_ptr<arrow::Array> array;
  if (type->Equals(*arrow::float64())) {
    REQUIRE(doubles.Append(1.0).ok());
    REQUIRE(doubles.Finish(&array).ok());
  } else {
    REQUIRE(strings.Append("x").ok());
    REQUIRE(strings.Finish(&array).ok());
  }
  const auto table = arrow::Table::Make(arrow::schema({arrow::field(name, type)}), {array}, 1);
  auto sink = arrow::io::FileOutputStream::Open(path.string()).ValueOrDie();
  REQUIRE(parquet::arrow::WriteTable(*table, arrow::default_memory_pool(), sink, 1024).ok());
  REQUIRE(sink->Close().ok());
}

}  // namespace

TEST_CASE("a probe sidecar reads back as written", "[results][probes]") {
  const fp8lab::testing::Scratch dir("probe-sidecar");
  CHECK(probe_relative_path("run-1").generic_string() == "probes/run-1.parquet");
  CHECK_THROWS(probe_relative_path("../escape"));
  const auto rows = some_rows();
  const auto path = dir / probe_relative_path("run-1");
  write_probes(path, rows);
  const auto back = read_probes(path);
  REQUIRE(back.size() == rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    INFO("row " << i);
    const auto& a = back[i];
    const auto& b = rows[i];
    CHECK(a.step == b.step);
    CHECK(a.direction == b.direction);
    CHECK(a.recipe == b.recipe);
    CHECK(a.variant == b.variant);
    CHECK(a.draw == b.draw);
    CHECK(a.tensor == b.tensor);
    for (auto member : {&ProbeRow::loss,
                        &ProbeRow::reference_loss,
                        &ProbeRow::grad_norm,
                        &ProbeRow::error_norm,
                        &ProbeRow::cosine,
                        &ProbeRow::rel_error,
                        &ProbeRow::bias,
                        &ProbeRow::noise,
                        &ProbeRow::chmiel_ratio,
                        &ProbeRow::update_cosine,
                        &ProbeRow::update_rel_error,
                        &ProbeRow::draw_spread,
                        &ProbeRow::wgrad_input_crest,
                        &ProbeRow::wgrad_input_crest_rht,
                        &ProbeRow::wgrad_input_rel_error,
                        &ProbeRow::wgrad_input_rel_error_rht,
                        &ProbeRow::wgrad_grad_crest,
                        &ProbeRow::wgrad_grad_crest_rht,
                        &ProbeRow::wgrad_grad_rel_error,
                        &ProbeRow::wgrad_grad_rel_error_rht}) {
      INFO("wrote " << b.*member << ", read " << a.*member);
      CHECK(same(a.*member, b.*member));
    }
  }
  write_probes(dir / "empty.parquet", {});
  CHECK(read_probes(dir / "empty.parquet").empty());
}

TEST_CASE("a probe sidecar older than the wgrad_* columns reads them as NaN", "[results][probes]") {
  // One row with the columns the first sidecars had, and none of the RHT ones.
  const fp8lab::testing::Scratch dir("probe-sidecar-old");
  std::vector<std::shared_ptr<arrow::Field>> fields;
  std::vector<std::shared_ptr<arrow::Array>> arrays;
  for (const char* name : {"step", "draw"}) {
    arrow::Int64Builder builder;
    REQUIRE(builder.Append(0).ok());
    fields.push_back(arrow::field(name, arrow::int64(), false));
    arrays.push_back(builder.Finish().ValueOrDie());
  }
  const std::pair<const char*, const char*> strings[] = {{"direction", kOnBaseline},
                                                         {"recipe", "nvfp4 te"},
                                                         {"variant", kAllGemms},
                                                         {"tensor", "w"}};
  for (const auto& [name, value] : strings) {
    arrow::StringBuilder builder;
    REQUIRE(builder.Append(value).ok());
    fields.push_back(arrow::field(name, arrow::utf8(), false));
    arrays.push_back(builder.Finish().ValueOrDie());
  }
  for (const char* name :
       {"loss", "reference_loss", "grad_norm", "error_norm", "cosine", "rel_error", "bias", "noise",
        "chmiel_ratio", "update_cosine", "update_rel_error", "draw_spread"}) {
    arrow::DoubleBuilder builder;
    REQUIRE(builder.Append(0.5).ok());
    fields.push_back(arrow::field(name, arrow::float64(), false));
    arrays.push_back(builder.Finish().ValueOrDie());
  }
  const auto table = arrow::Table::Make(arrow::schema(fields), arrays, 1);
  const auto path = dir / "old.parquet";
  auto sink = arrow::io::FileOutputStream::Open(path.string()).ValueOrDie();
  REQUIRE(parquet::arrow::WriteTable(*table, arrow::default_memory_pool(), sink, 1024).ok());
  REQUIRE(sink->Close().ok());
  const auto rows = read_probes(path);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].rel_error == 0.5);
  CHECK(rows[0].recipe == "nvfp4 te");
  for (auto member : {&ProbeRow::wgrad_input_crest, &ProbeRow::wgrad_input_crest_rht,
                      &ProbeRow::wgrad_input_rel_error, &ProbeRow::wgrad_input_rel_error_rht,
                      &ProbeRow::wgrad_grad_crest, &ProbeRow::wgrad_grad_crest_rht,
                      &ProbeRow::wgrad_grad_rel_error, &ProbeRow::wgrad_grad_rel_error_rht}) {
    CHECK(std::isnan(rows[0].*member));
  }
}

TEST_CASE("a corrupt probe sidecar is refused, naming the file and the column",
          "[results][probes]") {
  const fp8lab::testing::Scratch dir("probe-sidecar-bad");
  const auto not_parquet = dir / "bad.parquet";
  { std::ofstream(not_parquet) << "{\"not\": \"parquet\"}\n"; }
  CHECK_THROWS_WITH(read_probes(not_parquet), Catch::Contains("probe sidecar") &&
                                                  Catch::Contains(not_parquet.string()) &&
                                                  Catch::Contains("not a Parquet file"));
  // Cut short: the footer is gone.
  const auto good = probe_parquet(some_rows(), "cut.parquet");
  { std::ofstream(dir / "cut.parquet", std::ios::binary) << good.substr(0, good.size() / 2); }
  CHECK_THROWS_WITH(read_probes(dir / "cut.parquet"), Catch::Contains("cut.parquet"));
  // Another table (no 'step' column), and a column of the wrong type.
  write_one_column(dir / "other.parquet", "loss", arrow::float64());
  CHECK_THROWS_WITH(read_probes(dir / "other.parquet"),
                    Catch::Contains("other.parquet") && Catch::Contains("no column 'step'"));
  write_one_column(dir / "typed.parquet", "step", arrow::utf8());
  CHECK_THROWS_WITH(read_probes(dir / "typed.parquet"),
                    Catch::Contains("column 'step' is string, expected int64"));
  // A word the report does not know.
  auto rows = some_rows();
  rows[1].variant = "wgrad";
  write_probes(dir / "word.parquet", rows);
  CHECK_THROWS_WITH(read_probes(dir / "word.parquet"),
                    Catch::Contains("word.parquet") && Catch::Contains("column 'variant'") &&
                        Catch::Contains("'wgrad'") && Catch::Contains("wgrad_only"));
  rows = some_rows();
  rows[0].direction = "baseline";
  write_probes(dir / "direction.parquet", rows);
  CHECK_THROWS_WITH(read_probes(dir / "direction.parquet"),
                    Catch::Contains("column 'direction'") && Catch::Contains("exact_on_run"));
  // Not a regular file: a directory.
  std::filesystem::create_directories(dir / "dir.parquet");
  CHECK_THROWS_WITH(read_probes(dir / "dir.parquet"), Catch::Contains("dir.parquet"));
}

TEST_CASE("a record names its probe sidecar; an older record has none", "[results][probes]") {
  auto json = fp8lab::testing::baseline_record();
  const auto older = run_record_from_json(json);
  CHECK_FALSE(older.probe_sidecar.present());
  CHECK_FALSE(to_json(older).contains("probe_sidecar"));
  json["probe_sidecar"] = "probes/baseline-w-seed0-fp32.parquet";
  const auto named = run_record_from_json(json);
  CHECK(named.probe_sidecar.value_or("") == "probes/baseline-w-seed0-fp32.parquet");
  CHECK(to_json(named) == json);
  json["probe_sidecar"] = nullptr;
  const auto none = run_record_from_json(json);
  CHECK(none.probe_sidecar.is_null());
  CHECK(to_json(none) == json);
  json["probe_sidecar"] = 3;
  CHECK_THROWS_WITH(run_record_from_json(json), Catch::Contains("probe_sidecar"));
}
