// How fp8lab opens what lies in a results directory: no link planted there is followed, and only
// regular files are read. No LibTorch.
//
// Links. A results directory may be shared (docs/results-schema.md): whoever can write into it
// could make DIR/.lock-sweep, DIR/claims/<id>, DIR/logs/<id>.log, or DIR/runs/ itself, a
// symbolic link to another user's file or directory, and that user's sweep would write there. So
// every directory fp8lab creates or reads under DIR (runs/, baselines/, layer_stats/, jobs/,
// claims/, logs/) is opened relative to DIR's descriptor with O_NOFOLLOW | O_DIRECTORY
// (open_subdirectory), files are created relative to that descriptor with O_NOFOLLOW, and a link
// in either place is refused with an error naming it and where it points. DIR itself may be a
// link: --out is the user's choice. Records, sweep.json, baselines, sidecars and reports are
// written to a fresh temp file (O_EXCL) and renamed into place (write_file_at), which replaces a
// link instead of following it.
//
// Regular files only. A FIFO named runs/x.json would block a reader forever, a device would be
// read from; so every reader opens with O_NONBLOCK | O_NOFOLLOW, checks with fstat that it has a
// regular file, and otherwise throws NotARegularFile naming the path and what it is (a FIFO, a
// socket, a character device, a directory...). The commands exit 2 on it (bad input).
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>

#include "experiments/results/io_error.hpp"

namespace fp8lab::experiments {

// A path that should be a regular file is something else (or a link).
class NotARegularFile : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An open file descriptor, closed on destruction; `path` names it in messages.
class Descriptor {
 public:
  Descriptor() = default;
  Descriptor(int fd, std::filesystem::path path) : fd_(fd), path_(std::move(path)) {}
  Descriptor(Descriptor&& other) noexcept;
  Descriptor& operator=(Descriptor&& other) noexcept;
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  ~Descriptor();
  int fd() const { return fd_; }
  const std::filesystem::path& path() const { return path_; }
  // Gives the descriptor up (the caller closes it).
  int release();

 private:
  int fd_ = -1;
  std::filesystem::path path_;
};

// What `mode` (st_mode) is, for messages: "a FIFO", "a socket", "a character device", "a block
// device", "a directory", "a symbolic link", "a regular file".
std::string file_kind(mode_t mode);

// The directory `directory` itself, following a link there (the user chose it: --out), created
// with its parents when absent and `create`; nullopt when absent and not `create`. Throws
// std::runtime_error naming it when it is not a directory or cannot be opened.
std::optional<Descriptor> open_directory(const std::filesystem::path& directory, bool create);

// The directory `name` (one path component) inside `parent`, opened relative to parent's
// descriptor with O_NOFOLLOW | O_DIRECTORY; created first (mkdirat) when absent and `create`,
// nullopt when absent and not `create`. A link there is refused (std::runtime_error naming it and
// its target), and so is anything else that is not a directory (NotARegularFile's sibling message:
// "... is a FIFO, not a directory").
std::optional<Descriptor> open_subdirectory(const Descriptor& parent, const std::string& name,
                                            bool create);

// open_directory(directory's parent, create) then open_subdirectory(its name, create): for the
// directories fp8lab makes inside a results directory (claims/, logs/, ...). Throws when absent.
Descriptor open_real_directory(const std::filesystem::path& directory);

// openat(dir, name, flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, mode), then fstat: a regular file
// or NotARegularFile naming it (a link: its target too); O_NONBLOCK is cleared before returning.
// Any other failure throws std::runtime_error naming the path and errno's message, except ENOENT
// when `missing_ok` (returns an empty Descriptor). `dir` empty (fd -1): `name` is a path, opened as
// is.
Descriptor open_regular_at(const Descriptor* dir, const std::filesystem::path& name, int flags,
                           mode_t mode, bool missing_ok = false);

// open_regular_at(nullptr, path, flags, mode): files created in a results directory (locks,
// logs), so that a link planted at `path` is refused, never written through.
int open_no_follow(const std::filesystem::path& path, int flags, mode_t mode);

// The bytes of the regular file `path` (open_regular_at's rules), or nullopt when it does not
// exist. A read error throws IoError (io_error.hpp).
std::optional<std::string> read_regular_file(const std::filesystem::path& path);
std::optional<std::string> read_regular_file_at(const Descriptor& dir, const std::string& name);

// Creates `directory` (and its parents) unless it exists, then refuses a directory that is a
// symbolic link: open_real_directory without keeping the descriptor.
void create_real_directory(const std::filesystem::path& directory);

}  // namespace fp8lab::experiments
