// TensorBoard's event files (host/src/run/tfrecord.hpp, event_log.hpp): the TFRecord framing and
// its checksums, and what a resumed run keeps of the files. Built without LibTorch, as the event
// log is (host/CMakeLists.txt).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "run/event_log.hpp"
#include "run/tfrecord.hpp"
#include "tensorboard_events.pb.h"
#include "wscsl/error.hpp"

namespace fs = std::filesystem;
using namespace wscsl;
using namespace wscsl::host;

namespace {

class EventFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("wscsl_events_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  void write_bytes(const fs::path& file, const std::string& bytes) {
    std::ofstream(file, std::ios::binary) << bytes;
  }

  // Every (tag, step) of the scalars in the event files of the directory.
  std::vector<std::pair<std::string, std::int64_t>> scalars() const {
    std::vector<std::pair<std::string, std::int64_t>> out;
    for (const fs::path& file : event_files(dir_)) {
      const TFRecords read = read_tfrecords(file);
      EXPECT_EQ(read.problem, "") << file;
      for (const std::string& record : read.records) {
        tensorboard::Event e;
        EXPECT_TRUE(e.ParseFromString(record));
        for (const auto& v : e.summary().value())
          if (v.value_case() == tensorboard::Summary::Value::kSimpleValue)
            out.emplace_back(v.tag(), e.step());
      }
    }
    return out;
  }

  fs::path dir_;
};

// A 1×1 RGB PNG, to log as a picture.
std::string tiny_png() {
  const unsigned char bytes[] = {
      0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48,
      0x44, 0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x00, 0x00,
      0x00, 0x90, 0x77, 0x53, 0xde, 0x00, 0x00, 0x00, 0x0c, 0x49, 0x44, 0x41, 0x54, 0x78,
      0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0x00, 0x00, 0x03, 0x01, 0x01, 0x00, 0xc9, 0xfe, 0x92,
      0xef, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82};
  return std::string(reinterpret_cast<const char*>(bytes), sizeof bytes);
}

}  // namespace

// CRC-32C of "123456789" is 0xE3069283 (the check value of the Castagnoli polynomial); TFRecord
// masks it as ((c >> 15) | (c << 17)) + 0xa282ead8, mod 2^32.
TEST(TFRecord, MasksTheCastagnoliChecksum) {
  EXPECT_EQ(masked_crc32c("123456789"), 0xc78ab0e5u);
}

TEST(TFRecord, FramesLengthChecksumDataChecksum) {
  const std::string framed = tfrecord("abc");
  ASSERT_EQ(framed.size(), 8u + 4u + 3u + 4u);
  EXPECT_EQ(framed.substr(0, 8), std::string("\x03\0\0\0\0\0\0\0", 8));
  EXPECT_EQ(framed.substr(12, 3), "abc");
}

TEST_F(EventFiles, ReadingStopsAtARecordCutShortOrDamaged) {
  const std::string whole = tfrecord("first") + tfrecord("second") + tfrecord("third");
  write_bytes(dir_ / "cut", whole.substr(0, whole.size() - 3));
  TFRecords read = read_tfrecords(dir_ / "cut");
  EXPECT_EQ(read.records, (std::vector<std::string>{"first", "second"}));
  EXPECT_NE(read.problem.find("record 3"), std::string::npos) << read.problem;

  std::string damaged = whole;
  damaged[tfrecord("first").size() + 12] ^= 0x20;  // a bit of "second"
  write_bytes(dir_ / "damaged", damaged);
  read = read_tfrecords(dir_ / "damaged");
  EXPECT_EQ(read.records, std::vector<std::string>{"first"});
  EXPECT_NE(read.problem.find("fails its data's CRC-32C"), std::string::npos) << read.problem;

  std::string bad_length = whole;
  bad_length[3] = 0x7f;  // the length of "first", whose checksum no longer matches
  write_bytes(dir_ / "bad_length", bad_length);
  read = read_tfrecords(dir_ / "bad_length");
  EXPECT_TRUE(read.records.empty());
  EXPECT_NE(read.problem.find("length that fails"), std::string::npos) << read.problem;
}

// A run with 5 steps an epoch, killed after step 8 logged; its checkpoint is after step 7 (epoch 1
// done). What it logged beyond goes, and so does what only the end of a run logs.
TEST_F(EventFiles, AResumedRunKeepsWhatItsCheckpointCovers) {
  write_bytes(dir_ / "curves.png", tiny_png());
  {
    EventLog log(dir_);
    log.session_start({{"trainer.lr", 0.1}}, "g");
    for (std::int64_t step = 1; step <= 8; ++step) {
      log.training(step, {{"loss", 1.0 / static_cast<double>(step)}});
      if (step == 5) log.epoch(step, 1, {{"val/accuracy", 0.5}});
    }
    log.test(8, {{"accuracy", 0.6}});
    log.picture(8, "curves", dir_ / "curves.png");
    log.session_end(true);
    log.flush();
  }
  // A second file whose last record a kill cut short.
  EventLog second(dir_);
  second.training(9, {{"loss", 0.1}});
  second.flush();
  const fs::path second_file = second.file();
  const std::uintmax_t size = fs::file_size(second_file);
  fs::resize_file(second_file, size - 2);

  truncate_event_files(dir_, 1, 7);
  std::vector<std::pair<std::string, std::int64_t>> expected;
  for (std::int64_t step = 1; step <= 7; ++step) {
    expected.emplace_back("train/loss", step);
    if (step == 5) {
      expected.emplace_back("epoch/number", 5);
      expected.emplace_back("val/accuracy", 5);
    }
  }
  EXPECT_EQ(scalars(), expected);
  // The second file held no scalar a checkpoint covers: it is gone.
  EXPECT_FALSE(fs::exists(second_file));
  ASSERT_EQ(event_files(dir_).size(), 1u);
  // The hyperparameters stay.
  bool session = false;
  for (const std::string& record : read_tfrecords(event_files(dir_)[0]).records) {
    tensorboard::Event e;
    ASSERT_TRUE(e.ParseFromString(record));
    for (const auto& v : e.summary().value())
      session = session || v.metadata().plugin_data().plugin_name() == "hparams";
  }
  EXPECT_TRUE(session);
}

TEST_F(EventFiles, AnEpochThatEndedAfterTheCheckpointGoes) {
  {
    EventLog log(dir_);
    log.training(5, {{"loss", 1.0}});
    log.epoch(5, 1, {{"epoch/loss", 1.0}});
    log.flush();
  }
  // The checkpoint after step 5 was committed before epoch 1 ended (checkpoint_every).
  truncate_event_files(dir_, 0, 5);
  EXPECT_EQ(scalars(), (std::vector<std::pair<std::string, std::int64_t>>{{"train/loss", 5}}));
}

TEST_F(EventFiles, AWholeRecordThatIsNotAnEventIsKept) {
  fs::path file;
  {
    EventLog log(dir_);
    log.training(9, {{"loss", 1.0}});
    log.flush();
    file = log.file();
  }
  // Field number 0 makes the bytes no protocol-buffer message.
  const std::string foreign("\x00\x01foreign", 9);
  tensorboard::Event probe;
  ASSERT_FALSE(probe.ParseFromString(foreign));
  std::ofstream(file, std::ios::binary | std::ios::app) << tfrecord(foreign);

  truncate_event_files(dir_, 0, 5);  // covers none of the file's scalars
  ASSERT_TRUE(fs::exists(file));
  const TFRecords read = read_tfrecords(file);
  EXPECT_EQ(read.problem, "");
  EXPECT_EQ(read.records.back(), foreign);
}

TEST_F(EventFiles, APictureMustBeAWholePng) {
  write_bytes(dir_ / "cut.png", tiny_png().substr(0, 40));
  EventLog log(dir_);
  try {
    log.picture(1, "cut", dir_ / "cut.png");
    FAIL() << "a cut PNG was logged";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("cut.png is not a whole PNG"), std::string::npos)
        << e.what();
  }
}
