// Checks a baseline's weights and gradients file (DIR/baselines/<run_id>.pt, results_store.hpp)
// before anything trusts it. The file is LibTorch's archive: a zip whose entries are stored
// (PyTorchStreamWriter). A truncated or garbage file used to pass until an FP8 run loaded it and
// failed with a miniz message naming no file, while the sweep exited 0. Now --resume and
// `fp8lab run` set such a file aside with its record and run the baseline again, and
// `fp8lab report` refuses it, naming the file (as for records). No LibTorch: the check reads the
// zip's end record, central directory and local headers within the file's bounds, and each
// entry's CRC-32 (zlib), so the sweep process can run it and libFuzzer can drive it.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "experiments/results/results_store.hpp"

namespace fp8lab::experiments {

// Why `bytes` is not a whole zip archive with at least one entry whose data matches its CRC-32
// (stored or deflated entries; zip64 sizes and offsets included), or nullopt when it is one.
std::optional<std::string> zip_archive_problem(std::string_view bytes);

// What a baseline record keeps of its archive ("baseline_archive": {"bytes", "crc32"}), so that
// a file of the right shape but other contents (another run's, a partial copy) is caught too.
nlohmann::json archive_fingerprint(std::string_view bytes);

// Why the archive at `path` is not the one `record` (a finished baseline's record) was written
// with: missing, unreadable, not a whole zip (zip_archive_problem), or not matching the record's
// baseline_archive fingerprint when it has one (records from before it have none). nullopt when
// it is good.
std::optional<std::string> baseline_archive_problem(const std::filesystem::path& path,
                                                    const nlohmann::json& record);

// For `file` (DIR/runs/<id>.json as read): when it holds a finished baseline whose archive has a
// baseline_archive_problem, renames the record and the archive aside (ResultsDirectory::set_aside:
// their bytes stay for a post-mortem) so that the baseline runs again, and returns the message
// that says so, naming the archive and its problem. nullopt (nothing moved) otherwise.
std::optional<std::string> set_aside_bad_baseline(const ResultsDirectory& directory,
                                                  const RunRecordFile& file);

}  // namespace fp8lab::experiments
