#include "experiments/runner/no_follow.hpp"

#include <fcntl.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace fp8lab::experiments {
namespace {

[[noreturn]] void refuse_link(const std::filesystem::path& link) {
  std::error_code error;
  const auto target = std::filesystem::read_symlink(link, error);
  throw std::runtime_error(link.string() + " is a symbolic link (to " +
                           (error ? std::string("an unreadable target") : target.string()) +
                           "): fp8lab never writes through a link in a results directory, "
                           "where another user may have planted it. Remove the link and run "
                           "again");
}

}  // namespace

void create_real_directory(const std::filesystem::path& directory) {
  std::filesystem::create_directories(directory);
  if (std::filesystem::is_symlink(directory)) refuse_link(directory);
}

int open_no_follow(const std::filesystem::path& path, int flags, mode_t mode) {
  const int fd = ::open(path.c_str(), flags | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd >= 0) return fd;
  const int error = errno;
  if (error == ELOOP || (error == EEXIST && std::filesystem::is_symlink(path))) {
    refuse_link(path);
  }
  throw std::runtime_error("cannot open " + path.string() + ": " + std::strerror(error));
}

}  // namespace fp8lab::experiments
