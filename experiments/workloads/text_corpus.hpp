// The character-level corpus of the GPT workloads: the license texts every Debian machine has in
// /usr/share/common-licenses (offline, stable, ~250 KB of English prose with some structure).
// Plain C++ (no LibTorch).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace fp8lab::experiments {

struct TextCorpus {
  std::vector<std::string> files;           // the files read, in the order read
  std::vector<std::int64_t> train;          // token ids of the first 90% of the text
  std::vector<std::int64_t> eval;           // token ids of the last 10%
  std::vector<unsigned char> vocabulary;    // byte of each token id, sorted ascending
  std::int64_t vocabulary_size_padded = 0;  // rounded up to a multiple of 16 (FP8 GEMM dims)
};

// Reads the regular files of `directory` in sorted name order (symbolic links such as GPL -> GPL-3
// are skipped: they would repeat a text), concatenates them separated by one newline, maps each
// byte to its rank among the bytes present, and splits 90/10. Throws std::runtime_error naming the
// directory when it has no readable file.
TextCorpus read_text_corpus(const std::filesystem::path& directory);

// The default corpus directory.
inline constexpr const char* kDefaultCorpusDirectory = "/usr/share/common-licenses";

}  // namespace fp8lab::experiments
