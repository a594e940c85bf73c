#include "recipes/explain.hpp"

#include "recipes/accelerate.hpp"
#include "recipes/compatibility.hpp"
#include "recipes/recipe_file.hpp"
#include "recipes/run_source.hpp"

namespace fp8lab::recipes {

std::string explain_text(const std::string& text, const std::string& file) {
  const RunSource source = source_from_text(text, file);
  return format_compatibility(source.compatibility, (source.kind == SourceKind::accelerate_config
                                                         ? "accelerate config "
                                                         : "fp8lab recipe file ") +
                                                        file);
}

std::string explain_environment(const std::map<std::string, std::string>& env) {
  // With none set, the text explains accelerate's defaults; say so (fp8lab run --env refuses).
  const bool none = accelerate_fp8_variables(env).empty();
  return format_compatibility(compatibility(read_accelerate_env(env)),
                              none ? "accelerate settings from the ACCELERATE_FP8_* environment "
                                     "(none is set: these are accelerate's defaults)"
                                   : "accelerate settings from the ACCELERATE_FP8_* environment");
}

std::string explain_file(const std::string& path) {
  return explain_text(read_recipe_text(path), path);
}

}  // namespace fp8lab::recipes
