// The worker pool behind run_units (parallel.hpp).
#include "sim/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace fp8lab::sim {
namespace {

class WorkerPool {
 public:
  ~WorkerPool() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& worker : workers_) worker.join();
  }

  void run(std::int64_t count, int threads, const std::function<void(std::int64_t)>& body) {
    std::lock_guard job(job_mutex_);
    const auto helpers = static_cast<std::size_t>(std::min<std::int64_t>(threads, count) - 1);
    while (workers_.size() < helpers) workers_.emplace_back([this] { worker_loop(); });
    {
      std::lock_guard lock(mutex_);
      body_ = &body;
      count_ = count;
      next_.store(0);
      wanted_ = helpers;
      joined_ = finished_ = 0;
      closed_ = false;
      ++generation_;
    }
    wake_.notify_all();
    work();
    // No worker may join once the caller is done; wait for those that did, so that body (and what
    // it references) outlives every use, even when a unit threw.
    std::unique_lock lock(mutex_);
    closed_ = true;
    done_.wait(lock, [this] { return finished_ == joined_; });
    body_ = nullptr;
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

 private:
  // Runs units until none are left; the first exception stops the job and is kept for the caller.
  void work() {
    try {
      for (std::int64_t u = next_.fetch_add(1); u < count_; u = next_.fetch_add(1)) (*body_)(u);
    } catch (...) {
      next_.store(count_);
      std::lock_guard lock(error_mutex_);
      if (!error_) error_ = std::current_exception();
    }
  }

  void worker_loop() {
    std::uint64_t seen = 0;
    std::unique_lock lock(mutex_);
    while (true) {
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      if (closed_ || joined_ >= wanted_) continue;
      ++joined_;
      lock.unlock();
      work();
      lock.lock();
      ++finished_;
      if (finished_ == joined_) done_.notify_all();
    }
  }

  std::mutex job_mutex_;    // one job at a time
  std::mutex error_mutex_;  // guards error_ while units run
  std::exception_ptr error_;
  std::mutex mutex_;  // guards everything below except next_
  std::condition_variable wake_, done_;
  std::vector<std::thread> workers_;
  const std::function<void(std::int64_t)>* body_ = nullptr;
  std::int64_t count_ = 0;
  std::atomic<std::int64_t> next_{0};
  std::size_t wanted_ = 0, joined_ = 0, finished_ = 0;
  bool closed_ = false, stop_ = false;
  std::uint64_t generation_ = 0;
};

}  // namespace

void run_units(std::int64_t count, int threads, const std::function<void(std::int64_t)>& body) {
  static WorkerPool pool;
  pool.run(count, threads, body);
}

}  // namespace fp8lab::sim
