#include "experiments/workloads/text_corpus.hpp"

#include <algorithm>
#include <array>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>

namespace fp8lab::experiments {

TextCorpus read_text_corpus(const std::filesystem::path& directory) {
  namespace fs = std::filesystem;
  std::error_code error;
  std::vector<fs::path> paths;
  for (const auto& entry : fs::directory_iterator(directory, error)) {
    if (entry.is_symlink() || !entry.is_regular_file()) continue;
    paths.push_back(entry.path());
  }
  if (error) {
    throw std::runtime_error("text corpus: cannot list " + directory.string() + ": " +
                             error.message());
  }
  std::sort(paths.begin(), paths.end());

  TextCorpus corpus;
  std::string text;
  for (const auto& path : paths) {
    std::ifstream in(path, std::ios::binary);
    if (!in) continue;
    text.append(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    text.push_back('\n');
    corpus.files.push_back(path.string());
  }
  if (text.empty()) {
    throw std::runtime_error("text corpus: no readable regular file in " + directory.string());
  }

  std::array<std::int64_t, 256> id{};
  std::array<bool, 256> present{};
  for (char c : text) present[static_cast<unsigned char>(c)] = true;
  for (int b = 0; b < 256; ++b) {
    if (!present[static_cast<std::size_t>(b)]) continue;
    id[static_cast<std::size_t>(b)] = static_cast<std::int64_t>(corpus.vocabulary.size());
    corpus.vocabulary.push_back(static_cast<unsigned char>(b));
  }
  const auto size = static_cast<std::int64_t>(corpus.vocabulary.size());
  corpus.vocabulary_size_padded = (size + 15) / 16 * 16;

  const std::size_t split = text.size() * 9 / 10;
  corpus.train.reserve(split);
  corpus.eval.reserve(text.size() - split);
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto token = id[static_cast<unsigned char>(text[i])];
    (i < split ? corpus.train : corpus.eval).push_back(token);
  }
  return corpus;
}

}  // namespace fp8lab::experiments
