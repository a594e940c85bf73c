// The files of a results directory (results_store.hpp), as fp8lab writes and opens them: every
// write goes through one place (write_file_at), and every directory under the results directory
// is opened relative to its descriptor without following a link (no_follow.hpp). No LibTorch.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "experiments/results/io_error.hpp"
#include "experiments/results/no_follow.hpp"
#include "experiments/results/results_store.hpp"

namespace fp8lab::experiments {

// The one place where fp8lab writes a file: `text` to `name` inside `directory`, atomically (temp
// file created there with O_EXCL | O_NOFOLLOW, write, fsync, renameat, fsync of the directory).
// Throws IoError (io_error.hpp: the path and errno) on failure, leaving no temp file.
// write_file_atomically (results_store.hpp) writes through it.
//
// Test hook: FP8LAB_FAULT_WRITE=N:ENOSPC|EDQUOT|EIO makes the N-th write fail with that errno, as a
// full disk would, before anything is written; the writes are counted in this process or, when
// FP8LAB_FAULT_COUNT_FILE names a file, in that file (one byte appended per write), so that a
// sweep and its runs' processes count together (docs/architecture.md, "Errors and results").
void write_file_at(const Descriptor& directory, const std::string& name, const std::string& text);

// Writes `relative` ("sweep.json", or "runs/<id>.json": at most one directory) under the results
// directory atomically (write_file_at), that subdirectory created when absent and opened relative to
// the root's descriptor, never through a link (no_follow.hpp: a link there throws, naming it).
void write_results_file(const ResultsDirectory& results, const std::filesystem::path& relative,
                        const std::string& text);

// The subdirectory `name` (runs, baselines, ...) of the results directory, opened without following
// a link (a link or a non-directory there throws, naming it); nullopt when it or the root is absent.
std::optional<Descriptor> results_subdirectory(const ResultsDirectory& results,
                                               const std::string& name);

// results_subdirectory of each directory fp8lab makes in a results directory (runs, baselines,
// layer_stats, jobs, claims, logs): throws naming the first that is a link or not a directory.
// `fp8lab run` and `sweep` call it before anything runs.
void check_results_subdirectories(const ResultsDirectory& results);

}  // namespace fp8lab::experiments
