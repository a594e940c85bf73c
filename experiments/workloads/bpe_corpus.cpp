#include "experiments/workloads/bpe_corpus.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <stdexcept>

namespace fp8lab::experiments {
namespace {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw std::runtime_error("text corpus: cannot read " + path.string() +
                             " (scripts/setup makes it, via scripts/text-corpus; or set "
                             "FP8LAB_TEXT_DIR to a directory it made)");
  }
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::int32_t> read_ids(const std::filesystem::path& path, std::int64_t vocabulary) {
  const auto text = read_file(path);
  std::vector<std::int32_t> ids;
  ids.reserve(text.size() / 4);
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end) {
    if (*p == ' ' || *p == '\n') {
      ++p;
      continue;
    }
    std::int32_t id = 0;
    const auto [stop, error] = std::from_chars(p, end, id);
    if (error != std::errc() || id < 0 || id >= vocabulary ||
        (stop < end && *stop != ' ' && *stop != '\n')) {
      throw std::runtime_error("text corpus: " + path.string() + " at byte " +
                               std::to_string(p - text.data()) + ": '" +
                               std::string(p, std::min<std::ptrdiff_t>(end - p, 12)) +
                               "' is not a token id from 0 to " + std::to_string(vocabulary - 1));
    }
    ids.push_back(id);
    p = stop;
  }
  if (ids.empty()) throw std::runtime_error("text corpus: " + path.string() + " has no token");
  return ids;
}

}  // namespace

std::filesystem::path default_bpe_corpus_directory() {
  if (const char* dir = std::getenv("FP8LAB_TEXT_DIR"); dir != nullptr && *dir != '\0') {
    return dir;
  }
  return std::filesystem::path(FP8LAB_SOURCE_DIR) / ".deps" / "text" / "kjv-bpe4096";
}

BpeCorpus read_bpe_corpus(const std::filesystem::path& directory) {
  BpeCorpus corpus;
  corpus.directory = directory;
  std::map<std::string, std::string> meta;
  const auto meta_text = read_file(directory / "meta.txt");
  std::size_t start = 0;
  while (start < meta_text.size()) {
    const auto end = std::min(meta_text.find('\n', start), meta_text.size());
    const auto line = meta_text.substr(start, end - start);
    if (const auto eq = line.find('='); eq != std::string::npos) {
      meta[line.substr(0, eq)] = line.substr(eq + 1);
    }
    start = end + 1;
  }
  try {
    corpus.vocabulary = std::stoll(meta.at("vocabulary"));
  } catch (const std::exception&) {
    throw std::runtime_error("text corpus: " + (directory / "meta.txt").string() +
                             " has no vocabulary=<integer> line (rerun scripts/setup)");
  }
  corpus.key = meta["key"];
  corpus.description = meta["source"] + " (" + meta["license"] + "), " + meta["tokenizer"] +
                       " vocabulary " + meta["vocabulary"] + ", key " + corpus.key;
  corpus.train = read_ids(directory / "train.ids", corpus.vocabulary);
  corpus.eval = read_ids(directory / "eval.ids", corpus.vocabulary);
  return corpus;
}

}  // namespace fp8lab::experiments
