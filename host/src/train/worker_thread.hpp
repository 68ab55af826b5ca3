// One thread that runs the tasks given to it, one after another in the order given, for as long as
// it lives: a read-ahead pays for starting a thread once, not once per batch. It is named, so that
// `top -H`, a debugger and /proc show what it is.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace wscsl::host {

class WorkerThread {
 public:
  // `name`: at most 15 characters (Linux's limit on a thread's name).
  explicit WorkerThread(std::string name);
  // Runs the tasks still queued, then ends the thread.
  ~WorkerThread();
  WorkerThread(const WorkerThread&) = delete;
  WorkerThread& operator=(const WorkerThread&) = delete;

  // Queues `task`; the future holds its result, or rethrows what it threw.
  template <class Task>
  auto run(Task task) -> std::future<decltype(task())> {
    using Result = decltype(task());
    auto packaged = std::make_shared<std::packaged_task<Result()>>(std::move(task));
    std::future<Result> result = packaged->get_future();
    post([packaged] { (*packaged)(); });
    return result;
  }

 private:
  void post(std::function<void()> task);
  void serve();

  const std::string name_;
  std::mutex mutex_;
  std::condition_variable queued_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::thread thread_;  // last: starts once the members it reads exist
};

}  // namespace wscsl::host
