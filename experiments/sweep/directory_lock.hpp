// Locks that keep two `fp8lab sweep` processes on one output directory from running a run twice.
// Shards may share DIR on purpose (sweep_driver.hpp), so there are two kinds:
//
//   DIR/.lock-<i>-of-<n>   held by the sweep running shard i/n into DIR for as long as it runs:
//                          a second sweep with the same shard is refused, naming the holder.
//   DIR/.lock-sweep        held by a sweep while it checks DIR/sweep.json against its own
//                          configuration and writes it (waited for): two sweeps of different
//                          shards and configurations cannot both pass the check.
//   DIR/claims/<run_id>    held by the sweep that runs <run_id> from just before its process
//                          starts until its record is written; then removed. A sweep that finds
//                          a run claimed (overlapping shard specs, two resumes) leaves it alone.
//
// All are flock(2) locks: the kernel drops them when their holder dies, kill -9 included, so a
// stale lock never blocks (its file stays; the next holder rewrites it). Each file holds its
// holder's "pid P on host H since T" for the refusal message only; the lock is the truth. On NFS,
// Linux turns flock into a whole-file lock at the server (docs/results-schema.md).
// Linux only (flock, O_CLOEXEC). No LibTorch.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "experiments/results/results_store.hpp"

namespace fp8lab::experiments {

// An exclusive flock on a file, held until this object is destroyed.
class HeldLock {
 public:
  HeldLock(int fd, std::filesystem::path path, bool remove_on_release);
  HeldLock(HeldLock&& other) noexcept;
  HeldLock& operator=(HeldLock&&) = delete;
  HeldLock(const HeldLock&) = delete;
  ~HeldLock();
  const std::filesystem::path& path() const { return path_; }

 private:
  int fd_ = -1;
  std::filesystem::path path_;
  bool remove_on_release_ = false;  // claims: unlinked (while still locked) before the unlock
};

// What a lock file says about its holder, e.g. "pid 4242 on host node7 since
// 2026-12-01T20:00:00Z (fp8lab sweep shard 0/1)"; "an unknown process" when it says nothing yet.
std::string lock_holder(const std::filesystem::path& path);

// Takes DIR/.lock-<i>-of-<n>. Throws std::runtime_error naming DIR, the shard, the lock file and
// its holder when another process holds it.
HeldLock lock_shard(const ResultsDirectory& directory, int shard_index, int shard_count);

// Takes DIR/.lock-sweep, waiting while another sweep holds it (a moment: a check and a write).
// Throws std::runtime_error naming the lock file when a signal interrupts the wait.
HeldLock lock_sweep_file(const ResultsDirectory& directory);

// Claims a run (DIR/claims/<run_id>) without waiting: nullopt when another process holds it.
std::optional<HeldLock> try_claim_run(const ResultsDirectory& directory, const std::string& run_id);

// Waits until no other process holds the run's claim. False when a signal interrupted the wait.
bool wait_for_claim(const ResultsDirectory& directory, const std::string& run_id);

std::filesystem::path claim_path(const ResultsDirectory& directory, const std::string& run_id);

}  // namespace fp8lab::experiments
