#include "experiments/runner/results_store.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
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

std::string this_host() {
  char host[256] = "unknown";
  ::gethostname(host, sizeof host - 1);
  return host;
}

}  // namespace

void write_file_atomically(const std::filesystem::path& path, const std::string& text) {
  const auto directory = path.parent_path().empty() ? std::filesystem::path(".")
                                                    : path.parent_path();
  std::filesystem::create_directories(directory);
  // A temp name unique across hosts sharing the directory, processes (pid) and threads (counter),
  // in the same directory so that rename() is atomic: .<name>.tmp.<host>.<pid>.<n>. Readers
  // ignore names starting with '.'; remove_stale_temp_files removes those of dead processes.
  static std::atomic<unsigned> counter{0};
  std::filesystem::path temp;
  int fd = -1;
  // O_EXCL|O_NOFOLLOW: a name someone planted (a link, a leftover of a process that had this pid)
  // is never written through; the next name is tried.
  for (int attempt = 0; fd < 0; ++attempt) {
    // Appends, not a "literal" + string chain: GCC 12 warns falsely (-Wrestrict) on the latter.
    std::string name = ".";
    name.append(path.filename().string()).append(".tmp.").append(this_host()).append(".");
    name.append(std::to_string(::getpid())).append(".").append(std::to_string(counter++));
    temp = directory / name;
    fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 && (errno != EEXIST || attempt == 100)) fail("cannot create", temp);
  }
  // On a failure (a full disk) the temp file goes: nothing is left behind for --resume to sweep.
  auto fail_removing = [&temp](const std::string& what, int open_fd) {
    const int error = errno;
    if (open_fd >= 0) ::close(open_fd);
    ::unlink(temp.c_str());
    errno = error;
    fail(what, temp);
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
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temp.c_str());
    errno = error;
    fail("cannot rename into place", path);
  }
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
  if (status != "finished" && status != "diverged" && status != "failed") {
    return "status " + status.dump() + " is not one of finished, diverged, failed";
  }
  return std::nullopt;
}

RunRecordFile read_run_record_file(const std::filesystem::path& path) {
  RunRecordFile file;
  file.path = path;
  std::ifstream in(path, std::ios::binary);
  file.exists = static_cast<bool>(in);
  if (!file.exists) {
    file.problem = std::filesystem::exists(path) ? "cannot be read" : "does not exist";
    return file;
  }
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return run_record_from_text(path, bytes.str());
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
  for (const auto& directory :
       {root_, runs_directory(), root_ / "baselines", root_ / "layer_stats"}) {
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
