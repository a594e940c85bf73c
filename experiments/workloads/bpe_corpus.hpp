// The llama workloads' tokenized text: the King James Bible (public domain, Debian's
// bible-kjv-text, 4.3 MB of English) in sentencepiece BPE tokens (vocabulary 4096), made at
// set-up by scripts/text-corpus and cached in .deps/text/kjv-bpe4096 (keyed by a hash of its
// inputs). The split is fixed there: every 10th chapter is eval. This side only reads the token
// ids, so it needs neither the network nor sentencepiece. No LibTorch.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace fp8lab::experiments {

struct BpeCorpus {
  std::filesystem::path directory;
  std::string key;          // the cache key (hash of the text, script and tokenizer version)
  std::string description;  // source, license, tokenizer, for the workload's description
  std::int64_t vocabulary = 0;
  std::vector<std::int32_t> train;
  std::vector<std::int32_t> eval;
};

// The cache directory: $FP8LAB_TEXT_DIR when set, else <source tree>/.deps/text/kjv-bpe4096.
std::filesystem::path default_bpe_corpus_directory();

// Reads meta.txt, train.ids and eval.ids of `directory`. std::runtime_error naming the file and
// saying how to make it (scripts/setup) when one is missing, and naming the file and the token
// when an id is not a number below the vocabulary.
BpeCorpus read_bpe_corpus(const std::filesystem::path& directory);

}  // namespace fp8lab::experiments
