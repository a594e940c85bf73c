// libFuzzer target over what fp8lab reads back from a results directory: a run record file
// (run_record_from_text, run_record_problem), the lines of results.jsonl (run_records_from_text)
// and the merge's conflict test between them (record_conflict), and the baseline archive check
// (zip_archive_problem, archive_fingerprint). The contract under test: a record file never
// throws (its problem is a string), results.jsonl throws ResultsFileError only, the archive check
// never throws, a record never conflicts with itself, and nothing crashes, leaks, reads out of
// bounds or trips UBSan. Built and run by scripts/fuzz-results (CTest: label fuzz).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "experiments/results/baseline_archive.hpp"
#include "experiments/results/results_reader.hpp"
#include "experiments/results/results_store.hpp"

using namespace fp8lab::experiments;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 65536) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);

  const auto file = run_record_from_text("fuzz/runs/r.json", text);
  if (file.record) {
    if (run_record_problem(*file.record)) std::abort();  // accepted, yet a problem
    if (record_conflict(*file.record, *file.record)) std::abort();
  } else if (file.problem.empty()) {
    std::abort();  // refused without saying why
  }

  try {
    const auto records = run_records_from_text("fuzz/results.jsonl", text);
    for (std::size_t i = 1; i < records.size(); ++i) {
      (void)record_conflict(records[i - 1].second, records[i].second);
    }
  } catch (const ResultsFileError&) {
  }

  (void)zip_archive_problem(text);
  (void)archive_fingerprint(text);
  return 0;
}
