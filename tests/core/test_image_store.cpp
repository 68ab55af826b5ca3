// The on-disk store of decoded images: what it holds, when it is built again, and its faults — a
// changed source, a damaged block, two builders at once, a full disk, a folder that cannot be
// written. (kill -9 while building: tests/host/test_store_crashes.cpp.)
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fmt/format.h>
#include <torch/torch.h>

#include "wscsl/data/image_file.hpp"
#include "wscsl/data/image_store.hpp"
#include "wscsl/data/resample.hpp"
#include "wscsl/error.hpp"
#include "wscsl/testing/image_fixtures.hpp"

namespace fs = std::filesystem;
using namespace wscsl;

namespace {

constexpr int kSize = 12;
constexpr std::int64_t kImageBytes = 3 * kSize * kSize;

class ImageStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("wscsl_image_store_{}", ::getpid());
    fs::remove_all(dir_);
    list_.folder = dir_ / "images";
    list_.index = dir_ / "list.txt";
    fs::create_directories(list_.folder);
    for (int i = 0; i < 6; ++i) {
      const std::string file = fmt::format("{}.{}", i, i % 2 ? "png" : "jpg");
      list_.entries.push_back({file, i + 1});
      if (i != 4)  // image 4 is missing
        write_image_file(list_.folder / file,
                         wscsl::testing::pattern_image(20 + i, 15, static_cast<std::uint64_t>(i)));
    }
    options_.image_size = kSize;
    options_.max_image_pixels = kDefaultMaxImagePixels;
    options_.decode_threads = 2;
    options_.cache_dir = dir_ / "cache";
    options_.limit_bytes = std::int64_t{1} << 30;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // What the reference pipeline makes of image `id`'s file.
  at::Tensor expected(int id) const {
    const DecodedImage d = read_image_file(list_.folder / list_.entries[id].file, 1 << 20);
    EXPECT_TRUE(d.problem.empty()) << d.problem;
    at::Tensor out = torch::empty({3, kSize, kSize}, torch::kUInt8);
    resize_and_center_crop(d.image, kSize, out.data_ptr<std::uint8_t>());
    return out;
  }
  fs::path store_file() const { return image_store_path(list_, options_); }
  // Adds `delta` to the byte at `offset` of the store's file.
  void damage(std::int64_t offset, char delta = 1) const {
    std::fstream f(store_file(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(offset);
    char c = 0;
    f.get(c);
    f.seekp(offset);
    f.put(static_cast<char>(c + delta));
  }
  std::int64_t pixels_offset() const {
    const auto n = static_cast<std::int64_t>(list_.entries.size());
    return store_data_bytes(n, kImageBytes) - n * kImageBytes;
  }
  static std::string error_of(const std::function<void()>& f) {
    try {
      f();
    } catch (const DataError& e) {
      return e.what();
    }
    ADD_FAILURE() << "expected a DataError";
    return {};
  }

  fs::path dir_;
  ImageList list_;
  ImageStoreOptions options_;
};

}  // namespace

TEST_F(ImageStoreTest, HoldsTheReferencePipelinesPixelsAndIsBuiltOnce) {
  const ImageStore built(list_, options_);
  EXPECT_EQ(built.decoded_images(), 5);
  EXPECT_EQ(built.path(), store_file());
  EXPECT_EQ(built.path().parent_path(), options_.cache_dir);
  EXPECT_NE(built.problem(4).find("4.jpg"), std::string::npos) << built.problem(4);
  EXPECT_TRUE(built.problem(3).empty());
  const at::Tensor got = built.gather({3, 0, 5});
  EXPECT_TRUE(got[0].equal(expected(3)));
  EXPECT_TRUE(got[1].equal(expected(0)));
  EXPECT_TRUE(got[2].equal(expected(5)));

  const ImageStore reopened(list_, options_);
  EXPECT_EQ(reopened.decoded_images(), 0);
  EXPECT_TRUE(reopened.gather({3, 0, 5}).equal(got));
  EXPECT_EQ(read_store_manifest(store_file()).images, 6);
  EXPECT_EQ(read_store_manifest(store_file()).problems.count(4), 1u);
}

TEST_F(ImageStoreTest, AnotherSizeOrFileListIsAnotherStore) {
  const fs::path first = store_file();
  options_.image_size = kSize + 1;
  EXPECT_NE(store_file(), first);
  options_.image_size = kSize;
  list_.entries.pop_back();
  EXPECT_NE(store_file(), first);
}

TEST_F(ImageStoreTest, AChangedSourceIsDecodedAgain) {
  { const ImageStore built(list_, options_); }
  const fs::path changed = list_.folder / list_.entries[2].file;
  write_image_file(changed, wscsl::testing::pattern_image(30, 17, 99));
  // Even were the clock coarse, the time differs from the one recorded.
  fs::last_write_time(changed, fs::last_write_time(changed) + std::chrono::seconds(1));
  const ImageStore rebuilt(list_, options_);
  EXPECT_EQ(rebuilt.decoded_images(), 5);
  EXPECT_TRUE(rebuilt.gather({2})[0].equal(expected(2)));
  // The missing image appears: it is decoded too.
  write_image_file(list_.folder / list_.entries[4].file, wscsl::testing::pattern_image(9, 9, 4));
  const ImageStore completed(list_, options_);
  EXPECT_EQ(completed.decoded_images(), 6);
  EXPECT_TRUE(completed.problem(4).empty());
  EXPECT_TRUE(completed.gather({4})[0].equal(expected(4)));
}

TEST_F(ImageStoreTest, ADamagedImageIsRefusedNamingTheStoreNeverServed) {
  { const ImageStore built(list_, options_); }
  damage(pixels_offset() + 3 * kImageBytes + 7);
  const ImageStore store(list_, options_);
  EXPECT_TRUE(store.gather({2, 5})[1].equal(expected(5)));  // the others are fine
  const std::string e = error_of([&] { store.gather({3}); });
  EXPECT_EQ(e, fmt::format("the image store {0} is damaged (image 3 does not match its checksum); "
                           "remove it (`wscsl cache remove {0}`) and it is built again",
                           store_file().string()));
}

TEST_F(ImageStoreTest, ADamagedManifestTableOrLengthIsRefusedAtOpen) {
  { const ImageStore built(list_, options_); }
  const auto bytes = static_cast<std::int64_t>(fs::file_size(store_file()));
  damage(bytes - 10);  // in the manifest
  EXPECT_NE(error_of([&] {
              const ImageStore store(list_, options_);
            }).find("is damaged (its manifest does not match its checksum)"),
            std::string::npos);
  damage(bytes - 10, -1);
  damage(4096 + 3);  // in the source table
  EXPECT_NE(error_of([&] {
              const ImageStore store(list_, options_);
            }).find("is damaged (its source table does not match its checksum)"),
            std::string::npos);
  damage(4096 + 3, -1);
  fs::resize_file(store_file(), static_cast<std::uintmax_t>(bytes - 1000));
  const std::string truncated = error_of([&] { const ImageStore store(list_, options_); });
  EXPECT_NE(truncated.find(store_file().string() + " is damaged"), std::string::npos) << truncated;
  std::ofstream(store_file(), std::ios::binary) << "not a store";
  EXPECT_EQ(error_of([&] { const ImageStore store(list_, options_); }),
            store_file().string() +
                " is not an image store of wscsl (it does not start with "
                "WSCSLIMG)");
}

TEST_F(ImageStoreTest, TwoBuildersAtOnceDecodeOnceAndShareTheStore) {
  for (int i = 6; i < 60; ++i) {
    const std::string file = fmt::format("{}.png", i);
    list_.entries.push_back({file, i + 1});
    write_image_file(list_.folder / file,
                     wscsl::testing::pattern_image(40, 30, static_cast<std::uint64_t>(i)));
  }
  options_.decode_threads = 1;
  std::atomic<int> ready{0};
  std::int64_t decoded[2] = {-1, -1};
  at::Tensor pixels[2];
  std::vector<std::thread> builders;
  for (int b = 0; b < 2; ++b)
    builders.emplace_back([&, b] {
      ++ready;
      while (ready < 2) {
      }
      const ImageStore store(list_, options_);
      decoded[b] = store.decoded_images();
      pixels[b] = store.gather({0, 1, 2, 3, 5, 59});
    });
  for (std::thread& t : builders)
    t.join();
  EXPECT_EQ(std::min(decoded[0], decoded[1]), 0);
  EXPECT_EQ(std::max(decoded[0], decoded[1]), 59);
  EXPECT_TRUE(pixels[0].equal(pixels[1]));
  EXPECT_TRUE(store_temporaries(store_file()).empty());
}

TEST_F(ImageStoreTest, AFullDiskIsOneSentenceAndLeavesNothingBehind) {
  // The file size limit stands in for a full disk; its signal would end the process.
  rlimit old{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  const auto previous = ::signal(SIGXFSZ, SIG_IGN);
  rlimit small = old;
  small.rlim_cur = 8192;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  const std::string e = error_of([&] { const ImageStore store(list_, options_); });
  ::setrlimit(RLIMIT_FSIZE, &old);
  ::signal(SIGXFSZ, previous);
  EXPECT_EQ(e, fmt::format("cannot build the image store {}: reserving 1 MiB failed (File too "
                           "large); free room in {} or set dataset.cache_dir to another folder",
                           store_file().string(), options_.cache_dir.string()));
  EXPECT_FALSE(fs::exists(store_file()));
  EXPECT_TRUE(store_temporaries(store_file()).empty());
  const ImageStore later(list_, options_);  // with room again
  EXPECT_EQ(later.decoded_images(), 5);
}

TEST_F(ImageStoreTest, AStoreOverItsLimitIsRefusedWithTheRoomItNeeds) {
  options_.limit_bytes = 4096;
  const std::string e = error_of([&] { const ImageStore store(list_, options_); });
  EXPECT_NE(e.find(fmt::format("the image store of {} would take 1 MiB (6 images of 3×12×12 "
                               "bytes), more than cache_limit_mb = 0",
                               list_.index.string())),
            std::string::npos)
      << e;
  EXPECT_FALSE(fs::exists(store_file()));
}

TEST_F(ImageStoreTest, AFolderThatCannotBeMadeIsNamed) {
  fs::create_directories(dir_);
  std::ofstream(dir_ / "plain_file") << "x";
  options_.cache_dir = dir_ / "plain_file" / "cache";
  const std::string e = error_of([&] { const ImageStore store(list_, options_); });
  EXPECT_EQ(
      e.rfind(fmt::format("cannot create the image cache folder {} (", options_.cache_dir.string()),
              0),
      0u)
      << e;
  EXPECT_NE(e.find("); set dataset.cache_dir to a folder this process may write"),
            std::string::npos)
      << e;
}

TEST_F(ImageStoreTest, AnExistingStoreIsReadFromAFolderThatCannotBeWritten) {
  { const ImageStore built(list_, options_); }
  // Only a build writes (root ignores the permissions: there, this checks that nothing is added).
  fs::permissions(options_.cache_dir, fs::perms::owner_read | fs::perms::owner_exec);
  const auto files = std::distance(fs::directory_iterator(options_.cache_dir), {});
  const ImageStore store(list_, options_);
  EXPECT_EQ(store.decoded_images(), 0);
  EXPECT_TRUE(store.gather({1})[0].equal(expected(1)));
  EXPECT_EQ(std::distance(fs::directory_iterator(options_.cache_dir), {}), files);
  fs::permissions(options_.cache_dir, fs::perms::owner_all);
}

TEST_F(ImageStoreTest, TheNextBuilderRemovesWhatAKilledOneLeft) {
  fs::create_directories(options_.cache_dir);
  const fs::path abandoned = store_file().string() + ".tmp-999999";
  std::ofstream(abandoned) << "half a store";
  const ImageStore built(list_, options_);
  EXPECT_FALSE(fs::exists(abandoned));
  EXPECT_EQ(built.decoded_images(), 5);
}

TEST(ImageCacheDir, TheOptionElseXdgElseHome) {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const std::string saved = xdg ? xdg : "";
  EXPECT_EQ(image_cache_dir("/data/stores"), fs::path("/data/stores"));
  ::setenv("XDG_CACHE_HOME", "/xdg/cache", 1);
  EXPECT_EQ(image_cache_dir(""), fs::path("/xdg/cache/wscsl"));
  ::setenv("XDG_CACHE_HOME", "relative", 1);  // ignored, as the specification says
  EXPECT_EQ(image_cache_dir(""), fs::path(std::getenv("HOME")) / ".cache" / "wscsl");
  if (xdg)
    ::setenv("XDG_CACHE_HOME", saved.c_str(), 1);
  else
    ::unsetenv("XDG_CACHE_HOME");
}
