// fp8lab explain FILE | --env: the recipe fp8lab will run for an accelerate config or an fp8lab
// recipe file (or the ACCELERATE_FP8_* environment), what accelerate/TE/torchao really run, and
// every field dropped or changed on the way (recipes/explain.hpp).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

#include "experiments/cli/commands.hpp"
#include "experiments/cli/process_environment.hpp"
#include "recipes/error.hpp"
#include "recipes/explain.hpp"

namespace fp8lab::experiments::cli {

void add_explain_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "explain", "Print the recipe fp8lab runs for an accelerate config or recipe file, what "
                 "accelerate + TE (or torchao) really run, and every dropped or changed field");
  auto file = std::make_shared<std::string>();
  auto use_env = std::make_shared<bool>(false);
  auto* file_option =
      command->add_option("FILE", *file, "accelerate config (fp8_config:) or fp8lab recipe file")
          ->check(CLI::ExistingFile);
  auto* env_flag = command->add_flag(
      "--env", *use_env, "explain the ACCELERATE_FP8_* variables of this process instead");
  file_option->excludes(env_flag);
  command->callback([file, use_env] {
    if (!*use_env && file->empty()) throw CLI::RequiredError("FILE (or --env)");
    try {
      const std::string text = *use_env ? recipes::explain_environment(process_environment())
                                        : recipes::explain_file(*file);
      std::fputs(text.c_str(), stdout);
    } catch (const recipes::RecipeError& e) {
      std::fprintf(stderr, "fp8lab explain: %s\n", e.what());
      throw CLI::RuntimeError(2);  // CLI11 prints nothing more; main returns 2
    }
  });
}

}  // namespace fp8lab::experiments::cli
