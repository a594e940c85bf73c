#include "experiments/sweep/directory_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <stdexcept>

#include "experiments/results/no_follow.hpp"

namespace fp8lab::experiments {
namespace {

std::string holder_text(const std::string& what) {
  char host[256] = "unknown";
  ::gethostname(host, sizeof host - 1);
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  ::gmtime_r(&now, &utc);
  char since[32];
  std::strftime(since, sizeof since, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return "pid " + std::to_string(::getpid()) + " on host " + host + " since " + since + " (" +
         what + ")";
}

// Locks `path` (created if absent). Without `wait`, nullopt when another process holds it; with
// it, nullopt only when a signal interrupted the wait.
std::optional<HeldLock> lock_file(const std::filesystem::path& path, bool wait,
                                  bool remove_on_release, const std::string& what) {
  std::filesystem::create_directories(path.parent_path());
  for (;;) {
    // A planted link is refused (no_follow.hpp): the holder text below would overwrite its target.
    const int fd = open_no_follow(path, O_RDWR | O_CREAT, 0644);
    if (::flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB)) != 0) {
      const int error = errno;
      ::close(fd);
      if (error == EWOULDBLOCK || error == EINTR) return std::nullopt;
      throw std::runtime_error("cannot lock " + path.string() + ": " + std::strerror(error));
    }
    // A claim's previous holder unlinks the file before unlocking it: if we opened it before
    // that, our lock is on a file no longer at `path`, and a newcomer could lock a fresh file
    // there. Only a lock on the file `path` names now counts.
    struct stat locked {
    }, named{};
    if (::fstat(fd, &locked) != 0 || ::lstat(path.c_str(), &named) != 0 ||
        locked.st_ino != named.st_ino || locked.st_dev != named.st_dev) {
      ::close(fd);
      continue;
    }
    const std::string text = holder_text(what) + "\n";
    // The holder text is for messages only: failing to write it does not void the lock.
    if (::ftruncate(fd, 0) == 0) {
      [[maybe_unused]] const auto written = ::write(fd, text.data(), text.size());
    }
    return HeldLock(fd, path, remove_on_release);
  }
}

}  // namespace

HeldLock::HeldLock(int fd, std::filesystem::path path, bool remove_on_release)
    : fd_(fd), path_(std::move(path)), remove_on_release_(remove_on_release) {}

HeldLock::HeldLock(HeldLock&& other) noexcept
    : fd_(other.fd_), path_(std::move(other.path_)), remove_on_release_(other.remove_on_release_) {
  other.fd_ = -1;
}

HeldLock::~HeldLock() {
  if (fd_ < 0) return;
  if (remove_on_release_) ::unlink(path_.c_str());
  ::close(fd_);  // drops the flock
}

std::string lock_holder(const std::filesystem::path& path) {
  const auto text = read_regular_file(path);  // a FIFO or a device there is named, never read
  const std::string line = text ? text->substr(0, text->find('\n')) : "";
  return line.empty() ? "an unknown process" : line;
}

std::filesystem::path claim_path(const ResultsDirectory& directory, const std::string& run_id) {
  check_run_id(run_id);
  return directory.root() / "claims" / run_id;
}

namespace {

// claims/ itself must not be a link (no_follow.hpp); DIR may be one the user chose.
std::filesystem::path checked_claim_path(const ResultsDirectory& directory,
                                         const std::string& run_id) {
  auto path = claim_path(directory, run_id);
  create_real_directory(path.parent_path());
  return path;
}

}  // namespace

HeldLock lock_shard(const ResultsDirectory& directory, int shard_index, int shard_count) {
  const std::string shard = std::to_string(shard_index) + "/" + std::to_string(shard_count);
  const auto path = directory.root() /
                    (".lock-" + std::to_string(shard_index) + "-of-" + std::to_string(shard_count));
  if (auto held = lock_file(path, false, false, "fp8lab sweep shard " + shard)) {
    return std::move(*held);
  }
  throw std::runtime_error(directory.root().string() + " is already being swept as shard " + shard +
                           " by " + lock_holder(path) + "; lock " + path.string() +
                           ". Wait for that sweep to end, or use another --out (the lock goes "
                           "away with its process, kill -9 included)");
}

HeldLock lock_sweep_file(const ResultsDirectory& directory) {
  const auto path = directory.root() / ".lock-sweep";
  if (auto held = lock_file(path, true, false, "fp8lab sweep, checking sweep.json")) {
    return std::move(*held);
  }
  throw std::runtime_error("interrupted while waiting for the lock " + path.string());
}

std::optional<HeldLock> try_claim_run(const ResultsDirectory& directory,
                                      const std::string& run_id) {
  return lock_file(checked_claim_path(directory, run_id), false, true,
                   "fp8lab sweep, run " + run_id);
}

bool wait_for_claim(const ResultsDirectory& directory, const std::string& run_id) {
  return lock_file(checked_claim_path(directory, run_id), true, true, "waiting for run " + run_id)
      .has_value();
}

}  // namespace fp8lab::experiments
