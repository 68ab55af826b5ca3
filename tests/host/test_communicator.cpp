// The communicator's collectives, ranks as threads of this process: Gloo on the CPU everywhere,
// NCCL on the GPUs where a GPU is visible and NCCL is built in. Every value is a small integer or
// half-integer, so sums and averages are exact and compared for equality.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <torch/cuda.h>

#include <chrono>
#include <exception>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "distributed/communicator.hpp"
#include "ports.hpp"

namespace {

using wscsl::host::CollectiveBackend;
using wscsl::host::Communicator;
using wscsl::host::JoinTimeouts;
using wscsl::host::World;

const JoinTimeouts kTimeout{std::chrono::seconds(60), std::chrono::seconds(60)};

// Runs `body` as each rank of a world of `size` threads joined through c10d (whatever the size),
// rank r computing on `device_of(r)`, and rethrows the first failure.
void run_ranks(int size, CollectiveBackend backend, const std::function<at::Device(int)>& device_of,
               const std::function<void(const Communicator&, const at::Device&)>& body) {
  const int port = wscsl::test::free_port();
  std::vector<std::exception_ptr> failures(static_cast<std::size_t>(size));
  std::vector<std::thread> ranks;
  for (int r = 0; r < size; ++r)
    ranks.emplace_back([&, r] {
      try {
        World world;
        world.rank = r;
        world.size = size;
        world.local_rank = r;
        world.local_size = size;
        world.master_port = static_cast<std::uint16_t>(port);
        const at::Device device = device_of(r);
        const auto comm = Communicator::group(world, kTimeout, backend, device);
        body(*comm, device);
      } catch (...) {
        failures[static_cast<std::size_t>(r)] = std::current_exception();
      }
    });
  for (std::thread& t : ranks)
    t.join();
  for (const std::exception_ptr& failure : failures)
    if (failure) std::rethrow_exception(failure);
}

// Every collective the trainer uses, on tensors of `device`; rank r contributes r + 1. A CPU
// tensor is summed too: it goes through Gloo whatever reduces the device's tensors.
void exercise_collectives(const Communicator& comm, const at::Device& device) {
  const auto on = at::TensorOptions().device(device).dtype(at::kFloat);
  const int n = comm.size();
  const float mine = static_cast<float>(comm.rank() + 1);
  const float total = static_cast<float>(n * (n + 1) / 2);

  at::Tensor shared = at::full({3}, mine, on);
  at::Tensor counts = at::full({2}, mine, at::kDouble);
  comm.broadcast({shared, counts});
  EXPECT_TRUE(at::equal(shared.cpu(), at::full({3}, 1.0f)));
  EXPECT_TRUE(at::equal(counts, at::full({2}, 1.0, at::kDouble)));

  at::Tensor summed = at::full({4}, mine, on);
  comm.sum(summed);
  EXPECT_TRUE(at::equal(summed.cpu(), at::full({4}, total)));
  at::Tensor summed_on_cpu = at::full({2}, static_cast<double>(mine), at::kDouble);
  comm.start_sum(summed_on_cpu)();
  EXPECT_TRUE(at::equal(summed_on_cpu, at::full({2}, static_cast<double>(total), at::kDouble)));

  // Rank r holds r + 1 rows of the value r + 1, so the gather has unequal parts.
  const at::Tensor rows = at::full({comm.rank() + 1, 2}, mine, on);
  const at::Tensor gathered = comm.gather_rows(rows).cpu();
  ASSERT_EQ(gathered.size(0), n * (n + 1) / 2);
  std::int64_t row = 0;
  for (int r = 0; r < n; ++r)
    for (int i = 0; i <= r; ++i, ++row)
      EXPECT_TRUE(at::equal(gathered[row], at::full({2}, static_cast<float>(r + 1))))
          << "row " << row;

  // The gradient of (r + 1)·Σp is r + 1 on rank r; averaged over the ranks it is (n + 1) / 2.
  at::Tensor parameter = at::zeros({5}, on).requires_grad_();
  const auto averager = comm.gradient_averager({parameter}, {"p"});
  const at::Tensor loss = parameter.sum() * mine;
  averager->prepare(loss);
  loss.backward();
  EXPECT_TRUE(at::equal(parameter.grad().cpu(), at::full({5}, total / static_cast<float>(n))));
}

TEST(Communicator, TwoRanksOverGlooShareEveryCollective) {
  run_ranks(
      2, CollectiveBackend::Gloo, [](int) { return at::Device(at::kCPU); }, exercise_collectives);
}

// As PyTorch's DDP: each gradient is a view into its bucket (backward accumulates there, and the
// storage stays from step to step), and before the second backward the bucket is laid out again
// in the order the first one's gradients became ready. Here `b`'s gradient is ready before `a`'s
// (autograd reaches `a` only through 2a), so `a` leads the bucket in the first step and follows
// `b` from the second on. The averages stay exact: (r + 1)·Σ_j b_j·Σ_i 2a_i with a = b = 1 has
// gradients 6(r + 1) for `a` and 10(r + 1) for `b`.
TEST(Communicator, GradientsAreBucketViewsLaidOutInTheOrderTheyBecomeReady) {
  run_ranks(
      2, CollectiveBackend::Gloo, [](int) { return at::Device(at::kCPU); },
      [](const Communicator& comm, const at::Device&) {
        at::Tensor a = at::ones({5}).requires_grad_();
        at::Tensor b = at::ones({3}).requires_grad_();
        const auto averager = comm.gradient_averager({a, b}, {"a", "b"});
        const float mean_weight = 1.5f;  // of r + 1 over ranks 0 and 1
        const void* storage_of_step_2 = nullptr;
        for (int step = 1; step <= 3; ++step) {
          for (at::Tensor* p : {&a, &b})
            if (p->grad().defined()) p->mutable_grad().zero_();
          const at::Tensor loss = (b * (a * 2).sum()).sum() * static_cast<float>(comm.rank() + 1);
          averager->prepare(loss);
          loss.backward();
          EXPECT_TRUE(at::equal(a.grad(), at::full({5}, 6 * mean_weight))) << step;
          EXPECT_TRUE(at::equal(b.grad(), at::full({3}, 10 * mean_weight))) << step;
          EXPECT_TRUE(a.grad().is_alias_of(b.grad())) << "step " << step;
          if (step == 1) {
            EXPECT_EQ(a.grad().storage_offset(), 0);
            EXPECT_EQ(b.grad().storage_offset(), 5);
          } else {
            EXPECT_EQ(b.grad().storage_offset(), 0) << "step " << step;
            EXPECT_EQ(a.grad().storage_offset(), 3) << "step " << step;
          }
          if (step == 2) storage_of_step_2 = b.grad().data_ptr();
          if (step == 3) {
            EXPECT_EQ(b.grad().data_ptr(), storage_of_step_2);
          }
        }
      });
}

// NCCL's construction and collectives run where a GPU exists (each rank on
// its own GPU, at most two; one GPU gives a world of one rank, which still forms the NCCL group).
TEST(Communicator, NcclReducesTensorsOnTheGpus) {
  if (!wscsl::host::nccl_built_in())
    GTEST_SKIP() << "this wscsl is built without NCCL (a CPU or LibTorch 1.13 build)";
  const auto gpus = static_cast<int>(torch::cuda::device_count());
  if (gpus == 0) GTEST_SKIP() << "no GPU is visible";
  run_ranks(
      std::min(gpus, 2), CollectiveBackend::Nccl,
      [](int r) { return at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(r)); },
      exercise_collectives);
}

TEST(Communicator, NcclWhereItCannotRunIsOneSentence) {
  World alone;
  alone.master_port = static_cast<std::uint16_t>(wscsl::test::free_port());
  try {
    Communicator::group(alone, kTimeout, CollectiveBackend::Nccl, at::Device(at::kCPU));
    FAIL() << "NCCL on the CPU was accepted";
  } catch (const wscsl::Error& e) {
    EXPECT_STREQ(e.what(),
                 "rank 0: NCCL reduces tensors on a GPU, and this process's model is on cpu (set "
                 "trainer.device to \"cuda\" or \"cuda:N\")");
  }
  if (wscsl::host::nccl_built_in()) return;
  try {
    Communicator::group(alone, kTimeout, CollectiveBackend::Nccl, at::Device(at::kCUDA, 0));
    FAIL() << "NCCL was accepted by a build without it";
  } catch (const wscsl::Error& e) {
    EXPECT_NE(std::string(e.what()).find("NCCL is not built into this wscsl"), std::string::npos)
        << e.what();
  }
}

}  // namespace
