// Files fp8lab creates in a results directory, opened so that a link planted there is refused,
// never written through. A results directory may be shared (docs/results-schema.md): whoever can
// write into it could otherwise make DIR/.lock-sweep, DIR/claims/<id> or DIR/logs/<id>.log a
// symbolic link to another user's file, and that user's sweep would overwrite or append to it.
// Records, sweep.json, baselines and reports are written to a fresh temp file (O_EXCL) and renamed
// into place (results_store.hpp), which replaces a link instead of following it. No LibTorch.
#pragma once

#include <sys/types.h>

#include <filesystem>

namespace fp8lab::experiments {

// open(2) of `path` with `flags` | O_NOFOLLOW | O_CLOEXEC. When `path` is a symbolic link, throws
// std::runtime_error naming the link and where it points; any other failure throws naming the
// path and errno's message. Returns the file descriptor.
int open_no_follow(const std::filesystem::path& path, int flags, mode_t mode);

// create_directories(directory), then refuses (std::runtime_error naming it) a directory that is
// a symbolic link: for the directories fp8lab makes inside a results directory (claims/, logs/),
// where a link would place new files outside it. The results directory itself may be reached
// through a link the user chose (--out).
void create_real_directory(const std::filesystem::path& directory);

}  // namespace fp8lab::experiments
