#include "experiments/results/no_follow.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace fp8lab::experiments {
namespace {

[[noreturn]] void refuse_link(const std::filesystem::path& link) {
  std::error_code error;
  const auto target = std::filesystem::read_symlink(link, error);
  throw NotARegularFile(link.string() + " is a symbolic link (to " +
                        (error ? std::string("an unreadable target") : target.string()) +
                        "): fp8lab never writes through a link in a results directory, "
                        "where another user may have planted it. Remove the link and run "
                        "again");
}

// `shown` exists and is not what was expected (`expected`: "a regular file", "a directory"): names
// what it is. A link is refused as such.
[[noreturn]] void refuse_kind(const std::filesystem::path& shown, mode_t mode,
                              const std::string& expected) {
  if (S_ISLNK(mode)) refuse_link(shown);
  throw NotARegularFile(shown.string() + " is " + file_kind(mode) + ", not " + expected +
                        ": fp8lab opens nothing else there (a FIFO would block it, a device "
                        "would be read). Remove it and run again");
}

// lstat of `name` relative to `dir` (or of the path `name` when dir is null); nullopt when it
// cannot be stat'ed.
std::optional<mode_t> kind_at(const Descriptor* dir, const std::filesystem::path& name) {
  struct stat s {};
  if (::fstatat(dir ? dir->fd() : AT_FDCWD, name.c_str(), &s, AT_SYMLINK_NOFOLLOW) != 0) {
    return std::nullopt;
  }
  return s.st_mode;
}

std::filesystem::path shown_path(const Descriptor* dir, const std::filesystem::path& name) {
  return dir ? dir->path() / name : name;
}

std::string read_all(Descriptor file) {
  std::string bytes;
  char buffer[1 << 16];
  for (;;) {
    const auto n = ::read(file.fd(), buffer, sizeof buffer);
    if (n == 0) return bytes;
    if (n < 0) {
      if (errno == EINTR) continue;
      throw IoError("cannot read " + file.path().string(), errno);
    }
    bytes.append(buffer, static_cast<std::size_t>(n));
  }
}

}  // namespace

Descriptor::Descriptor(Descriptor&& other) noexcept
    : fd_(other.fd_), path_(std::move(other.path_)) {
  other.fd_ = -1;
}

Descriptor& Descriptor::operator=(Descriptor&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    path_ = std::move(other.path_);
    other.fd_ = -1;
  }
  return *this;
}

Descriptor::~Descriptor() {
  if (fd_ >= 0) ::close(fd_);
}

int Descriptor::release() {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

std::string file_kind(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "a file of unknown type";
}

std::optional<Descriptor> open_directory(const std::filesystem::path& directory, bool create) {
  const auto path = directory.empty() ? std::filesystem::path(".") : directory;
  if (create) {
    std::error_code error;
    std::filesystem::create_directories(path, error);
    struct stat s {};
    if (error && ::stat(path.c_str(), &s) != 0) {
      throw IoError("cannot create the directory " + path.string(), error.value());
    }
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) return Descriptor(fd, path);
  const int error = errno;
  if (error == ENOENT && !create) return std::nullopt;
  if (error == ENOTDIR) {
    struct stat s {};
    if (::stat(path.c_str(), &s) == 0) refuse_kind(path, s.st_mode, "a directory");
  }
  throw IoError("cannot open the directory " + path.string(), error);
}

std::optional<Descriptor> open_subdirectory(const Descriptor& parent, const std::string& name,
                                            bool create) {
  const auto shown = parent.path() / name;
  if (create && ::mkdirat(parent.fd(), name.c_str(), 0755) != 0 && errno != EEXIST) {
    throw IoError("cannot create the directory " + shown.string(), errno);
  }
  const int fd =
      ::openat(parent.fd(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0) return Descriptor(fd, shown);
  const int error = errno;
  if (error == ENOENT && !create) return std::nullopt;
  if (error == ELOOP || error == ENOTDIR) {
    if (const auto mode = kind_at(&parent, name)) refuse_kind(shown, *mode, "a directory");
  }
  throw IoError("cannot open the directory " + shown.string(), error);
}

Descriptor open_real_directory(const std::filesystem::path& directory) {
  const auto parent = open_directory(directory.parent_path(), true);
  return std::move(*open_subdirectory(*parent, directory.filename().string(), true));
}

void create_real_directory(const std::filesystem::path& directory) {
  open_real_directory(directory);
}

Descriptor open_regular_at(const Descriptor* dir, const std::filesystem::path& name, int flags,
                           mode_t mode, bool missing_ok) {
  const auto shown = shown_path(dir, name);
  // O_NONBLOCK: opening a FIFO (for reading, or for writing with no reader) never waits.
  const int fd = ::openat(dir ? dir->fd() : AT_FDCWD, name.c_str(),
                          flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, mode);
  if (fd < 0) {
    const int error = errno;
    if (error == ENOENT && missing_ok) return {};
    // ELOOP: a link; ENXIO: a FIFO without reader or a socket; EISDIR: a directory opened for
    // writing; EEXIST with O_EXCL: whatever holds the name.
    if (error == ELOOP || error == ENXIO || error == EISDIR || error == EEXIST || error == ENODEV ||
        error == EOPNOTSUPP) {
      if (const auto kind = kind_at(dir, name); kind && !S_ISREG(*kind)) {
        refuse_kind(shown, *kind, "a regular file");
      }
    }
    throw IoError("cannot open " + shown.string(), error);
  }
  Descriptor file(fd, shown);
  struct stat s {};
  if (::fstat(fd, &s) != 0) throw IoError("cannot stat " + shown.string(), errno);
  if (!S_ISREG(s.st_mode)) refuse_kind(shown, s.st_mode, "a regular file");
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return file;
}

int open_no_follow(const std::filesystem::path& path, int flags, mode_t mode) {
  return open_regular_at(nullptr, path, flags, mode).release();
}

std::optional<std::string> read_regular_file(const std::filesystem::path& path) {
  auto file = open_regular_at(nullptr, path, O_RDONLY, 0, /*missing_ok=*/true);
  if (file.fd() < 0) return std::nullopt;
  return read_all(std::move(file));
}

std::optional<std::string> read_regular_file_at(const Descriptor& dir, const std::string& name) {
  auto file = open_regular_at(&dir, name, O_RDONLY, 0, /*missing_ok=*/true);
  if (file.fd() < 0) return std::nullopt;
  return read_all(std::move(file));
}

}  // namespace fp8lab::experiments
