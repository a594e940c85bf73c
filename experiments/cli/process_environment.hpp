// This process's environment as a map, for the commands that read accelerate's ACCELERATE_FP8_*
// variables (explain --env, run --env); recipes/ never reads the environment itself.
#pragma once

#include <map>
#include <string>

namespace fp8lab::experiments::cli {

std::map<std::string, std::string> process_environment();

}  // namespace fp8lab::experiments::cli
