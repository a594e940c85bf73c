#include "experiments/runner/results_store.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace fp8lab::experiments {
namespace {

[[noreturn]] void fail(const std::string& what, const std::filesystem::path& path) {
  throw std::runtime_error(what + " " + path.string() + ": " + std::strerror(errno));
}

void fsync_directory(const std::filesystem::path& directory) {
  const int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) fail("cannot open directory", directory);
  ::fsync(fd);  // best effort: some file systems refuse fsync on directories
  ::close(fd);
}

}  // namespace

void write_file_atomically(const std::filesystem::path& path, const std::string& text) {
  const auto directory = path.parent_path().empty() ? std::filesystem::path(".")
                                                    : path.parent_path();
  std::filesystem::create_directories(directory);
  // A temp name unique across processes (pid) and threads (counter), in the same directory so
  // that rename() is atomic. Readers ignore names starting with '.'.
  static std::atomic<unsigned> counter{0};
  // Appends, not a "literal" + string chain: GCC 12 warns falsely (-Wrestrict) on the latter.
  std::string name = ".";
  name.append(path.filename().string()).append(".tmp.").append(std::to_string(::getpid()));
  name.append(".").append(std::to_string(counter++));
  const auto temp = directory / name;
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("cannot create", temp);
  std::size_t written = 0;
  while (written < text.size()) {
    const auto n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      fail("cannot write", temp);
    }
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) {
    ::close(fd);
    fail("cannot fsync", temp);
  }
  if (::close(fd) != 0) fail("cannot close", temp);
  if (::rename(temp.c_str(), path.c_str()) != 0) fail("cannot rename into place", path);
  fsync_directory(directory);
}

void check_run_id(const std::string& run_id) {
  const bool ok = !run_id.empty() && run_id[0] != '.' &&
                  run_id.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                           "0123456789._-") == std::string::npos;
  if (!ok) {
    throw std::invalid_argument("run id '" + run_id +
                                "' is not a file name: use letters, digits, '.', '_', '-'");
  }
}

ResultsDirectory::ResultsDirectory(std::filesystem::path root) : root_(std::move(root)) {}

std::filesystem::path ResultsDirectory::run_record_path(const std::string& run_id) const {
  check_run_id(run_id);
  return runs_directory() / (run_id + ".json");
}

std::filesystem::path ResultsDirectory::baseline_trajectory_path(const std::string& run_id) const {
  check_run_id(run_id);
  return root_ / "baselines" / (run_id + ".pt");
}

void ResultsDirectory::write_run_record(const nlohmann::json& record) const {
  const auto run_id = record.at("run_id").get<std::string>();
  // dump() escapes nothing into newlines: one record is one line, as in results.jsonl.
  write_file_atomically(run_record_path(run_id), record.dump() + "\n");
}

std::set<std::string> ResultsDirectory::recorded_run_ids() const {
  std::set<std::string> ids;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(runs_directory(), error)) {
    const auto name = entry.path().filename().string();
    if (name.starts_with(".") || entry.path().extension() != ".json") continue;
    ids.insert(entry.path().stem().string());
  }
  return ids;
}

bool ResultsDirectory::has_record(const std::string& run_id) const {
  return std::filesystem::exists(run_record_path(run_id));
}

}  // namespace fp8lab::experiments
