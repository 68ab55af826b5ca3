// wscsl: train, evaluate and inspect conditional-similarity pipelines built from plugins. Each
// command adds its own options (command.hpp); this is their list, in the order --help shows them.
#include "bench_command.hpp"
#include "cache_command.hpp"
#include "check_command.hpp"
#include "command.hpp"
#include "describe_command.hpp"
#include "embed_command.hpp"
#include "eval_command.hpp"
#include "explore_command.hpp"
#include "export_command.hpp"
#include "export_weights_command.hpp"
#include "index_command.hpp"
#include "make_splits_command.hpp"
#include "make_triplets_command.hpp"
#include "plugins_command.hpp"
#include "search_command.hpp"
#include "train_command.hpp"
#include "wscsl/version.hpp"

int main(int argc, char** argv) {
  using namespace wscsl::host;
  CommandLine wscsl("wscsl " WSCSL_VERSION_STRING
                    " — conditional similarity learning from plugin pipelines");
  wscsl.add<TrainCommand>()
      .add<EvalCommand>()
      .add<EmbedCommand>()
      .add<BenchCommand>()
      .add<CheckCommand>()
      .add<MakeTripletsCommand>()
      .add<ExportWeightsCommand>()
      .add<ExportCommand>()
      .add<PluginsCommand>()
      .add<DescribeCommand>()
      .add<IndexCommand>()
      .add<SearchCommand>()
      .add<MakeSplitsCommand>()
      .add<ExploreCommand>()
      .add<CacheCommand>();
  return wscsl.run(argc, argv);
}
