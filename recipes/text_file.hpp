// A whole file's text, read once: the fp8lab recipe and sweep files, accelerate configs (recipes/
// readers), and the sweep file whose text `fp8lab sweep` parses, hashes into sweep.json and stores
// in every run's record (experiments/run/provenance.hpp).
#pragma once

#include <string>

namespace fp8lab::recipes {

// The file's bytes. RecipeError (error.hpp) naming the path when it is a directory or cannot be
// read.
std::string read_text_file(const std::string& path);

}  // namespace fp8lab::recipes
