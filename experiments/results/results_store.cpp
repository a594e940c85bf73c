#include "experiments/results/results_store.hpp"

#include "experiments/results/results_files.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace fp8lab::experiments {
namespace {

std::string this_host() {
  char host[256] = "unknown";
  ::gethostname(host, sizeof host - 1);
  return host;
}

// The test hook FP8LAB_FAULT_WRITE=N:ERRNO (ERRNO one of ENOSPC, EDQUOT, EIO): the N-th atomic
// write (counted from 1) fails with that errno, as a full disk would fail it, before anything is
// written. The writes are counted in this process, or, when FP8LAB_FAULT_COUNT_FILE names a file,
// in that file (one byte appended per write), so that a sweep and its runs' processes count
// together. docs/architecture.md, "Errors and results"; tests/experiments/faults_test.cpp.
int injected_write_error() {
  static const auto [target, injected] = []() -> std::pair<long, int> {
    const char* spec = std::getenv("FP8LAB_FAULT_WRITE");
    if (spec == nullptr || *spec == '\0') return {0, 0};
    const std::string text = spec;
    const auto colon = text.find(':');
    const std::string name = colon == std::string::npos ? "" : text.substr(colon + 1);
    const int error = name == "ENOSPC"   ? ENOSPC
                      : name == "EDQUOT" ? EDQUOT
                      : name == "EIO"    ? EIO
                                         : 0;
    long n = 0;
    try {
      n = std::stol(text.substr(0, colon));
    } catch (const std::exception&) {
    }
    if (n < 1 || error == 0) {
      std::fprintf(stderr, "FP8LAB_FAULT_WRITE '%s': expected N:ENOSPC|EDQUOT|EIO, N >= 1\n", spec);
      std::exit(2);
    }
    return {n, error};
  }();
  if (target == 0) return 0;
  static long count = 0;
  long index = ++count;
  if (const char* file = std::getenv("FP8LAB_FAULT_COUNT_FILE"); file != nullptr && *file) {
    const int fd = ::open(file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    struct stat s {};
    if (fd < 0 || ::write(fd, "w", 1) != 1 || ::fstat(fd, &s) != 0) {
      std::fprintf(stderr, "FP8LAB_FAULT_COUNT_FILE %s: %s\n", file, std::strerror(errno));
      std::exit(2);
    }
    ::close(fd);
    index = static_cast<long>(s.st_size);
  }
  return index == target ? injected : 0;
}

}  // namespace

void write_file_at(const Descriptor& directory, const std::string& name, const std::string& text) {
  const auto shown = directory.path() / name;
  if (const int error = injected_write_error()) {
    throw IoError("cannot write " + shown.string() + " (FP8LAB_FAULT_WRITE)", error);
  }
  // A temp name unique across hosts sharing the directory, processes (pid) and threads (counter),
  // in the same directory so that rename() is atomic: .<name>.tmp.<host>.<pid>.<n>. Readers
  // ignore names starting with '.'; remove_stale_temp_files removes those of dead processes.
  static std::atomic<unsigned> counter{0};
  std::string temp;
  int fd = -1;
  // O_EXCL|O_NOFOLLOW: a name someone planted (a link, a leftover of a process that had this pid)
  // is never written through; the next name is tried.
  for (int attempt = 0; fd < 0; ++attempt) {
    // Appends, not a "literal" + string chain: GCC 12 warns falsely (-Wrestrict) on the latter.
    temp = ".";
    temp.append(name).append(".tmp.").append(this_host()).append(".");
    temp.append(std::to_string(::getpid())).append(".").append(std::to_string(counter++));
    fd = ::openat(directory.fd(), temp.c_str(),
                  O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 && (errno != EEXIST || attempt == 100)) {
      throw IoError("cannot create " + (directory.path() / temp).string(), errno);
    }
  }
  // On a failure (a full disk) the temp file goes: nothing is left behind for --resume to sweep.
  auto fail_removing = [&](const std::string& what, int open_fd) {
    const int error = errno;
    if (open_fd >= 0) ::close(open_fd);
    ::unlinkat(directory.fd(), temp.c_str(), 0);
    throw IoError(what + " " + (directory.path() / temp).string(), error);
  };
  std::size_t written = 0;
  while (written < text.size()) {
    const auto n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_removing("cannot write", fd);
    }
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) fail_removing("cannot fsync", fd);
  if (::close(fd) != 0) fail_removing("cannot close", -1);
  if (::renameat(directory.fd(), temp.c_str(), directory.fd(), name.c_str()) != 0) {
    const int error = errno;
    ::unlinkat(directory.fd(), temp.c_str(), 0);
    throw IoError("cannot rename into place " + shown.string(), error);
  }
  ::fsync(directory.fd());  // best effort: some file systems refuse fsync on directories
}

void write_file_atomically(const std::filesystem::path& path, const std::string& text) {
  const auto directory = open_directory(path.parent_path(), /*create=*/true);
  write_file_at(*directory, path.filename().string(), text);
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

void write_results_file(const ResultsDirectory& results, const std::filesystem::path& relative,
                        const std::string& text) {
  const auto root = open_directory(results.root(), /*create=*/true);
  if (!relative.has_parent_path()) {
    write_file_at(*root, relative.string(), text);
    return;
  }
  // One level (runs/, baselines/, layer_stats/, jobs/): opened without following a link.
  const auto sub = open_subdirectory(*root, relative.parent_path().string(), /*create=*/true);
  write_file_at(*sub, relative.filename().string(), text);
}

std::optional<Descriptor> results_subdirectory(const ResultsDirectory& results,
                                               const std::string& name) {
  const auto root = open_directory(results.root(), /*create=*/false);
  if (!root) return std::nullopt;
  return open_subdirectory(*root, name, /*create=*/false);
}

void check_results_subdirectories(const ResultsDirectory& results) {
  for (const char* name : {"runs", "baselines", "layer_stats", "jobs", "claims", "logs"}) {
    results_subdirectory(results, name);
  }
}

void ResultsDirectory::write_run_record(const nlohmann::json& record) const {
  const auto run_id = record.at("run_id").get<std::string>();
  check_run_id(run_id);
  // dump() escapes nothing into newlines: one record is one line, as in results.jsonl.
  write_results_file(*this, std::filesystem::path("runs") / (run_id + ".json"),
                     record.dump() + "\n");
}

std::optional<std::string> run_record_problem(const nlohmann::json& record) {
  // The type, not the value: a 50 MB array nested 10^7 deep would overflow dump()'s recursion.
  if (!record.is_object()) {
    return std::string("a record must be a JSON object, got a JSON ") + record.type_name();
  }
  if (record.value("schema", nlohmann::json()) != "fp8lab.run") {
    return "field 'schema' is " + record.value("schema", nlohmann::json()).dump() +
           ", expected \"fp8lab.run\"";
  }
  for (const char* field : {"schema_version", "run_id", "kind", "status", "workload"}) {
    if (!record.contains(field)) return std::string("record has no field '") + field + "'";
  }
  const auto& version = record["schema_version"];
  if (!version.is_number_integer() || version.get<std::int64_t>() < 1 ||
      version.get<std::int64_t>() > kResultsSchemaVersion) {
    return "schema_version " + version.dump() + " is not one this fp8lab reads (1.." +
           std::to_string(kResultsSchemaVersion) + ")";
  }
  for (const char* field : {"run_id", "kind", "workload"}) {
    if (!record[field].is_string()) {
      return std::string("field '") + field + "' is " + record[field].dump() + ", not a string";
    }
  }
  if (record["kind"] != "fp8" && record["kind"] != "baseline" && record["kind"] != "null") {
    return "kind " + record["kind"].dump() + " is not one of fp8, baseline, null";
  }
  const auto& status = record["status"];
  if (status != "finished" && status != "diverged" && status != "unstable" && status != "failed") {
    return "status " + status.dump() + " is not one of finished, diverged, unstable, failed";
  }
  return std::nullopt;
}

RunRecordFile read_run_record_file(const std::filesystem::path& path) {
  // A FIFO, socket, device or directory here throws NotARegularFile (no_follow.hpp).
  if (auto text = read_regular_file(path)) return run_record_from_text(path, *text);
  RunRecordFile file;
  file.path = path;
  file.problem = "does not exist";
  return file;
}

RunRecordFile run_record_from_text(const std::filesystem::path& path, const std::string& text) {
  RunRecordFile file;
  file.path = path;
  file.exists = true;
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    file.problem = text.empty() ? "empty file (0 bytes)" : "holds only white space";
    return file;
  }
  nlohmann::json record;
  try {
    record = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    // A syntax error, or a number no double holds (out_of_range 406, found by fuzz_results).
    // Records end with a newline (write_run_record): without one the file was cut short.
    file.problem = std::string(text.back() == '\n' ? "" : "truncated (no final newline): ") +
                   "not one JSON object: " + e.what();
    return file;
  }
  if (auto problem = run_record_problem(record)) {
    file.problem = *problem;
    return file;
  }
  if (record["run_id"] != path.stem().string()) {
    file.problem = "run_id " + record["run_id"].dump() + " is not the file's name (" +
                   path.stem().string() + ")";
    return file;
  }
  file.record = std::move(record);
  return file;
}

std::vector<std::filesystem::path> ResultsDirectory::remove_stale_temp_files() const {
  std::vector<std::filesystem::path> removed;
  const std::string host = this_host();
  for (const char* sub : {"", "runs", "baselines", "layer_stats", "jobs"}) {
    // A planted link in place of a subdirectory is refused (no_follow.hpp), not swept through.
    if (*sub != '\0' && !results_subdirectory(*this, sub)) continue;
    const auto directory = root_ / sub;
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(directory, error)) {
      const auto name = entry.path().filename().string();
      // .<name>.tmp.<host>.<pid>.<n>: the host, then the pid, between the last dots.
      const auto tmp = name.rfind(".tmp.");
      if (name.empty() || name[0] != '.' || tmp == std::string::npos) continue;
      const auto last = name.rfind('.');
      const auto before = last == std::string::npos || last == 0 ? std::string::npos
                                                                 : name.rfind('.', last - 1);
      if (before == std::string::npos || before <= tmp + 4) continue;
      if (name.substr(tmp + 5, before - tmp - 5) != host) continue;  // another host's process
      const auto pid_text = name.substr(before + 1, last - before - 1);
      if (pid_text.empty() || pid_text.find_first_not_of("0123456789") != std::string::npos ||
          pid_text.size() > 9) {
        continue;
      }
      const auto pid = static_cast<pid_t>(std::stol(pid_text));
      if (::kill(pid, 0) == 0 || errno != ESRCH) continue;  // alive (or not ours to probe)
      if (std::filesystem::remove(entry.path(), error)) removed.push_back(entry.path());
    }
  }
  return removed;
}

std::vector<std::filesystem::path> ResultsDirectory::run_record_paths() const {
  std::vector<std::filesystem::path> paths;
  if (!results_subdirectory(*this, "runs"))
    return paths;  // a link there is refused (no_follow.hpp)
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(runs_directory(), error)) {
    const auto name = entry.path().filename().string();
    if (name.starts_with(".") || entry.path().extension() != ".json") continue;
    paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

std::vector<RunRecordFile> ResultsDirectory::run_record_files() const {
  std::vector<RunRecordFile> files;
  for (const auto& path : run_record_paths()) files.push_back(read_run_record_file(path));
  return files;
}

std::set<std::string> ResultsDirectory::recorded_run_ids() const {
  std::set<std::string> ids;
  for (const auto& file : run_record_files()) {
    if (file.record) ids.insert(file.path.stem().string());
  }
  return ids;
}

bool ResultsDirectory::has_record(const std::string& run_id) const {
  return read_run_record_file(run_record_path(run_id)).record.has_value();
}

std::filesystem::path ResultsDirectory::set_aside(const RunRecordFile& file) const {
  return set_aside(file.path);
}

std::filesystem::path ResultsDirectory::set_aside(const std::filesystem::path& path) const {
  for (int n = 1;; ++n) {
    const auto aside = path.parent_path() /
                       ("." + path.filename().string() + ".invalid-" + std::to_string(n));
    // symlink_status: a name held by a link (dangling or not) counts as taken too.
    if (std::filesystem::exists(std::filesystem::symlink_status(aside))) continue;
    std::filesystem::rename(path, aside);
    return aside;
  }
}

}  // namespace fp8lab::experiments
