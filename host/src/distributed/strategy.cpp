#include "strategy.hpp"

namespace wscsl::host {

Strategy::Strategy(const TrainerOptions& trainer, const World& world)
    : placement_(place(trainer, world)), precision_(trainer.precision) {
  use_threads(placement_);
  comm_ = Communicator::join(world, placement_.timeouts, placement_.collective_backend,
                             placement_.device);
}

}  // namespace wscsl::host
