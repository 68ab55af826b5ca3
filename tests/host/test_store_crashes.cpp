// kill -9 while an image store is being built, at an image and just before the complete store is
// renamed to its place: no store is left at its place, and the next run builds it and trains as
// a run that was never killed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "processes.hpp"
#include "wscsl/testing/image_fixtures.hpp"
#include "wscsl/util/fault_injection.hpp"

namespace fs = std::filesystem;

using wscsl::test::Finished;
using wscsl::test::Launch;
using wscsl::test::read_text;

namespace {

// The stores in `cache` (names ending with ".images") and the temporary files of their builders.
struct CacheFiles {
  int stores = 0;
  int temporaries = 0;
};

CacheFiles files_in(const fs::path& cache) {
  CacheFiles out;
  if (!fs::exists(cache)) return out;
  for (const fs::directory_entry& e : fs::directory_iterator(cache)) {
    const std::string name = e.path().filename().string();
    if (name.size() > 7 && name.compare(name.size() - 7, 7, ".images") == 0) ++out.stores;
    if (name.find(".images.tmp-") != std::string::npos) ++out.temporaries;
  }
  return out;
}

std::string pipeline(const std::string& cache) {
  return "[dataset]\ntype = \"image_folder\"\nroot = \"folder/images\"\n"
         "attributes = \"folder/attributes.csv\"\nimage_size = 8\ndecode_threads = 1\n"
         "cache_dir = \"" +
         cache +
         "\"\ntrain_triplets = 8\nval_triplets = 4\ntest_triplets = 4\n"
         "[backbone]\ntype = \"convnet\"\nwidth = 4\ndepth = 1\n"
         "[condition_module]\ntype = \"discovernet\"\n[[losses]]\ntype = \"margin\"\n"
         "[trainer]\nepochs = 1\nbatch_size = 4\nthreads = 1\nevaluate_after = false\n";
}

}  // namespace

TEST(StoreCrashes, AKillWhileBuildingLeavesNoStoreAndTheNextRunBuildsIt) {
  const wscsl::testing::ScratchDir scratch("store_crashes");
  const fs::path dir = scratch.path();
  wscsl::testing::write_image_folder(dir / "folder");
  std::ofstream(dir / "reference.toml") << pipeline("reference_cache");
  std::ofstream(dir / "p.toml") << pipeline("cache");
  const auto train = [&](const std::string& toml, const std::string& run,
                         const std::string& fault) {
    return Launch("train " + (dir / toml).string() + " --run-dir " + (dir / run).string(), fault,
                  dir / (run + ".log"))
        .wait();
  };
  const Finished reference = train("reference.toml", "reference", "");
  ASSERT_EQ(reference.status, 0) << reference.text;

  const fs::path cache = dir / "cache";
  int attempt = 0;
  for (const std::string& fault : {std::string(wscsl::faults::kStoreImageWritten) + ":5",
                                   std::string(wscsl::faults::kStoreBeforeRename)}) {
    const Finished killed = train("p.toml", "killed" + std::to_string(attempt++), fault);
    ASSERT_TRUE(killed.killed) << fault << " was never reached:\n" << killed.text;
    EXPECT_EQ(files_in(cache).stores, 0) << "a store is in place after a kill at " << fault;
    // The next builder removes what the one before left.
    EXPECT_EQ(files_in(cache).temporaries, 1) << "after a kill at " << fault;
  }
  const Finished after = train("p.toml", "after", "");
  ASSERT_EQ(after.status, 0) << after.text;
  EXPECT_EQ(files_in(cache).stores, 1);
  EXPECT_EQ(files_in(cache).temporaries, 0);
  EXPECT_EQ(read_text(dir / "after" / "steps.tsv"), read_text(dir / "reference" / "steps.tsv"));
}
