#include "strategy.hpp"

#include <chrono>

namespace wscsl::host {

Strategy::Strategy(const TrainerOptions& trainer, const World& world)
    : placement_(place(trainer, world)), precision_(trainer.precision) {
  use_threads(placement_);
  comm_ = Communicator::join(world,
                             {std::chrono::seconds(trainer.rendezvous_timeout_s),
                              std::chrono::seconds(trainer.collective_timeout_s)},
                             placement_.collective_backend, placement_.device);
}

}  // namespace wscsl::host
