#include "worker_thread.hpp"

#include <pthread.h>

namespace wscsl::host {

WorkerThread::WorkerThread(std::string name)
    : name_(std::move(name)), thread_([this] { serve(); }) {}

WorkerThread::~WorkerThread() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  queued_.notify_one();
  thread_.join();
}

void WorkerThread::post(std::function<void()> task) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    tasks_.push_back(std::move(task));
  }
  queued_.notify_one();
}

void WorkerThread::serve() {
  pthread_setname_np(pthread_self(), name_.c_str());
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      queued_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty()) return;
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

}  // namespace wscsl::host
