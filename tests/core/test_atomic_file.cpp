#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "wscsl/error.hpp"
#include "wscsl/util/atomic_file.hpp"

namespace fs = std::filesystem;

TEST(AtomicFile, ReplacesContentAndLeavesNoTemporary) {
  const fs::path dir = fs::temp_directory_path() / "wscsl_atomic_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path file = dir / "state.bin";
  wscsl::write_file_atomically(file, "first");
  wscsl::write_file_atomically(file, std::string("second\0x", 8));
  EXPECT_EQ(wscsl::read_file(file), std::string("second\0x", 8));
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir))
    ++entries;
  EXPECT_EQ(entries, 1u);
  fs::remove_all(dir);
}

TEST(AtomicFile, FailureKeepsThePreviousFileAndNamesIt) {
  const fs::path dir = fs::temp_directory_path() / "wscsl_atomic_fail";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path file = dir / "keep.txt";
  wscsl::write_file_atomically(file, "precious");
  // A directory where the temporary file should go makes the write fail.
  fs::create_directories(dir / (".keep.txt.tmp-" + std::to_string(::getpid())));
  fs::create_directories(dir / (".keep.txt.tmp-" + std::to_string(::getpid())) / "x");
  try {
    wscsl::write_file_atomically(file, "replacement");
    FAIL() << "expected an error";
  } catch (const wscsl::Error& e) {
    EXPECT_NE(std::string(e.what()).find(file.string()), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("previous content is unchanged"), std::string::npos);
  }
  EXPECT_EQ(wscsl::read_file(file), "precious");
  fs::remove_all(dir);
}

TEST(ReadFile, MissingFileIsADataError) {
  EXPECT_THROW(wscsl::read_file("/nonexistent/file"), wscsl::DataError);
}
