// A whole file's text, for the sweep file that sweeps and their runs read once, parse
// (recipes::parse_sweep_text) and store in the records (provenance.hpp). No LibTorch.
#pragma once

#include <filesystem>
#include <string>

namespace fp8lab::experiments {

// The file's bytes. Throws std::runtime_error naming the path when it is a directory or cannot be
// read.
std::string read_text_file(const std::filesystem::path& path);

}  // namespace fp8lab::experiments
