// Hostile files for the readers of the outfit benchmarks, each under an address-space limit: every
// one is refused by a documented bound, in one sentence naming the file and the bound, before it
// can exhaust memory.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "wscsl/data/csv.hpp"
#include "wscsl/data/npy.hpp"
#include "wscsl/data/outfit_files.hpp"
#include "wscsl/data/outfit_types.hpp"
#include "wscsl/data/text_features.hpp"
#include "wscsl/data/type_pairs_pickle.hpp"
#include "wscsl/error.hpp"
#include "wscsl/testing/image_fixtures.hpp"
#include "wscsl/testing/memory_limit.hpp"
#include "wscsl/util/text.hpp"

namespace fs = std::filesystem;
using namespace wscsl;
using wscsl::testing::LimitedRun;

namespace {

constexpr std::size_t kMemoryLimit = std::size_t{100} << 20;

class HostileFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!wscsl::testing::memory_limit_available())
      GTEST_SKIP() << "a sanitizer reserves the address space a limit would bound";
  }
  fs::path file(const std::string& name) const { return scratch_.path() / name; }
  void write(const std::string& name, const std::string& bytes) const {
    std::ofstream(file(name), std::ios::binary) << bytes;
  }
  // A file of `size` bytes that takes no disk space: all zero bytes, no line break.
  fs::path sparse(const std::string& name, std::uintmax_t size) const {
    write(name, "");
    fs::resize_file(file(name), size);
    return file(name);
  }
  // `read` must be refused, under the memory limit, with a message holding every one of `parts`.
  static void expect_refused(const std::function<void()>& read,
                             const std::vector<std::string>& parts) {
    const LimitedRun run = wscsl::testing::run_with_memory_limit(read, kMemoryLimit);
    ASSERT_EQ(run.outcome, LimitedRun::Outcome::Refused) << run.message;
    for (const std::string& part : parts)
      EXPECT_NE(run.message.find(part), std::string::npos) << run.message << "\nexpected: " << part;
    EXPECT_EQ(run.message.find('\n'), std::string::npos) << run.message;
  }

  wscsl::testing::ScratchDir scratch_{"hostile_outfit_files"};
};

// Pickle opcodes of protocol 2: a string, a memo put and get, a pair, an append.
std::string binunicode(const std::string& s) {
  std::string out = "X";
  for (int b = 0; b < 4; ++b)
    out += static_cast<char>((s.size() >> (8 * b)) & 0xFF);
  return out + s;
}

// A list of 4,096 pairs of one `bytes`-long string, written once and memoised: the first pair
// takes the string on the stack, the others only memo references.
std::string memo_reference_bomb(std::size_t bytes) {
  std::string bomb = "\x80\x02]" + binunicode(std::string(bytes, 't')) + std::string("q\x00", 2);
  bomb += std::string(
      "h\x00\x86"
      "a",
      4);
  for (int i = 1; i < 4096; ++i)
    bomb += std::string(
        "h\x00h\x00\x86"
        "a",
        6);
  return bomb + ".";
}

}  // namespace

// The memory limit itself: an allocation past it is an OutOfMemory, not a machine out of memory.
TEST_F(HostileFiles, TheLimitStopsAnAllocationPastIt) {
  const LimitedRun run = wscsl::testing::run_with_memory_limit(
      [] {
        std::string big(std::size_t{1} << 30, 'x');
        if (big[12345] != 'x') throw DataError("unreachable");
      },
      kMemoryLimit);
  EXPECT_EQ(run.outcome, LimitedRun::Outcome::OutOfMemory) << run.message;
  EXPECT_EQ(wscsl::testing::run_with_memory_limit([] {}, kMemoryLimit).outcome,
            LimitedRun::Outcome::Returned);
}

// The bomb: 4,096 memo references to one 4 MiB string, a 4 MiB file.
TEST_F(HostileFiles, APickleLargerThanItsBoundIsRefusedBySize) {
  write("typespaces.p", memo_reference_bomb(4 << 20));
  expect_refused(
      [&] { read_type_pairs_pickle(file("typespaces.p")); },
      {file("typespaces.p").string(),
       fmt::format("more than the {} this kind of file may have", kMaxTypePairsPickleBytes)});
}

// The same within the file's bound: 512 KiB referenced 4,096 times would be 4 GiB of names.
TEST_F(HostileFiles, MemoReferencesAreCountedAgainstTheTextBound) {
  write("typespaces.p", memo_reference_bomb(512 << 10));
  expect_refused(
      [&] { read_type_pairs_pickle(file("typespaces.p")); },
      {file("typespaces.p").string(),
       fmt::format("the pairs' type names come to more than {} bytes", kMaxTypePairsTextBytes)});
}

TEST_F(HostileFiles, APickleBuildingTooManyValuesIsRefused) {
  std::string bomb = "\x80\x02]" + binunicode("t") + std::string("q\x00(", 3);
  for (std::size_t i = 0; i <= kMaxTypePairsPickleValues; ++i)
    bomb += std::string("h\x00", 2);
  write("typespaces.p", bomb + "e.");
  expect_refused([&] { read_type_pairs_pickle(file("typespaces.p")); },
                 {file("typespaces.p").string(),
                  fmt::format("builds more than {} values", kMaxTypePairsPickleValues)});
}

// 20,000 type names would be a 20,000² condition matrix.
TEST_F(HostileFiles, TwentyThousandTypeNamesAreRefusedBeforeTheirMatrix) {
  std::string pickle = "\x80\x02]";
  for (int t = 0; t < 20000; ++t)
    pickle += binunicode(fmt::format("t{}", t)) + binunicode(fmt::format("t{}", t)) +
              "\x86"
              "a";
  write("typespaces.p", pickle + ".");
  expect_refused(
      [&] {
        type_spaces_from_pairs(read_type_pairs_pickle(file("typespaces.p")), file("typespaces.p"));
      },
      {file("typespaces.p").string(),
       fmt::format("names 20000 item types, more than the {} a dataset may have", kMaxItemTypes)});
}

// 30 million columns: refused by the header, before the 120 MB of values are read.
TEST_F(HostileFiles, AnNpyMatrixWiderThanALayerIsRefusedByItsHeader) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 30000000), }";
  header += std::string(128 - 10 - header.size() - 1, ' ') + "\n";
  const fs::path npy = sparse("wide.npy", 128 + std::uintmax_t{120000000});
  {
    std::fstream out(npy, std::ios::binary | std::ios::in | std::ios::out);
    out << "\x93NUMPY" << '\x01' << '\x00' << static_cast<char>(header.size()) << '\x00' << header;
  }
  expect_refused([&] { read_npy_matrix(npy); },
                 {npy.string(), fmt::format("has more than {} columns", kMaxNpyColumns)});
}

// A 2 GiB line: refused at the line bound, its first few hundred kilobytes read.
TEST_F(HostileFiles, AnHglmmLineIsRefusedAtItsBound) {
  const fs::path hglmm = sparse("train_hglmm_pca6000.txt", std::uintmax_t{2} << 30);
  expect_refused(
      [&] { read_hglmm_features(hglmm, 6000); },
      {hglmm.string() + ":1:", fmt::format("longer than {} bytes", hglmm_max_line_bytes(6000))});
}

TEST_F(HostileFiles, ACompatibilityLineIsRefusedAtItsBound) {
  const fs::path lines = sparse("compatibility_test.txt", std::uintmax_t{2} << 30);
  BadRows bad;
  expect_refused([&] { read_compatibility_file(lines, bad); },
                 {lines.string() + ":1:",
                  fmt::format("longer than {} bytes, the bound of a compatibility line",
                              kMaxCompatibilityLineBytes)});
}

TEST_F(HostileFiles, ACsvRecordIsRefusedAtItsBound) {
  write("category_types.csv", "categoryid,type\n1," + std::string(kMaxCsvRecordBytes + 1, 'x'));
  BadRows bad;
  expect_refused([&] { read_csv(file("category_types.csv"), bad); },
                 {file("category_types.csv").string() + ":2:",
                  fmt::format("the record is longer than {} bytes", kMaxCsvRecordBytes)});
}

TEST_F(HostileFiles, JsonNestingAndStringsAreBounded) {
  write("train.json", std::string(100000, '[') + std::string(100000, ']'));
  expect_refused(
      [&] { read_outfit_split(file("train.json"), OutfitLayout::PolyvoreOutfits); },
      {file("train.json").string(), fmt::format("more than {} deep", kMaxOutfitJsonDepth)});
  write("valid.json", "[{\"set_id\": \"" + std::string(kMaxOutfitJsonString + 1, 's') + "\"}]");
  expect_refused(
      [&] { read_outfit_split(file("valid.json"), OutfitLayout::PolyvoreOutfits); },
      {file("valid.json").string(), fmt::format("a string of {} bytes, more than the {}",
                                                kMaxOutfitJsonString + 1, kMaxOutfitJsonString)});
}

// A FIFO, a device or a directory given for a data file is named for what it is.
TEST_F(HostileFiles, SpecialFilesAreNamed) {
  ASSERT_EQ(::mkfifo(file("fifo.json").c_str(), 0600), 0);
  fs::create_symlink("/dev/zero", file("zero.txt"));
  fs::create_directory(file("folder.p"));
  const auto refusal = [](const std::function<void()>& read) {
    try {
      read();
    } catch (const DataError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  BadRows bad;
  EXPECT_EQ(refusal([&] { read_outfit_split(file("fifo.json"), OutfitLayout::Maryland); }),
            file("fifo.json").string() + ": is a FIFO; expected a regular file");
  EXPECT_EQ(refusal([&] { read_compatibility_file(file("zero.txt"), bad); }),
            file("zero.txt").string() +
                ": is a character device (a link to /dev/zero); expected a regular file");
  EXPECT_EQ(refusal([&] { read_type_pairs_pickle(file("folder.p")); }),
            file("folder.p").string() + ": is a directory; expected a regular file");
  EXPECT_EQ(refusal([&] { read_hglmm_features(file("zero.txt"), 2); }),
            file("zero.txt").string() +
                ": is a character device (a link to /dev/zero); expected a regular file");
}

TEST(QuotedExcerpt, CutsAndEscapes) {
  EXPECT_EQ(quoted_excerpt("plain"), "'plain'");
  EXPECT_EQ(quoted_excerpt(std::string("a\x1b[31mb\0c\x7f", 10)), "'a\\x1b[31mb\\x00c\\x7f'");
  EXPECT_EQ(quoted_excerpt("No\xc3\xabl \xff"), "'No\xc3\xabl \\xff'");
  const std::string long_value(250, 'v');
  EXPECT_EQ(quoted_excerpt(long_value), "'" + std::string(200, 'v') + "\u2026' (50 more bytes)");
}

TEST(FileProblems, OneIsASentenceAndSeveralAreListed) {
  FileProblems one;
  EXPECT_TRUE(one.attempt([] {}));
  EXPECT_FALSE(one.attempt([] { throw DataError("a.json: outfit 0: bad"); }));
  try {
    one.throw_if_any();
    FAIL() << "no error";
  } catch (const DataError& e) {
    EXPECT_STREQ(e.what(), "a.json: outfit 0: bad");
  }
  FileProblems two = one;
  two.add("b.txt:3: worse");
  try {
    two.throw_if_any();
    FAIL() << "no error";
  } catch (const DataError& e) {
    EXPECT_STREQ(e.what(),
                 "2 problems in the dataset's files:\n  a.json: outfit 0: bad\n  b.txt:3: worse");
  }
}

TEST_F(HostileFiles, LinesAreReadWithoutTheirBreaksAndBounded) {
  write("lines.txt", "a\r\n\nbc\nd");
  LineReader reader(file("lines.txt"), 2, "a test line");
  std::string line;
  std::vector<std::string> lines;
  while (reader.next(line))
    lines.push_back(line);
  EXPECT_EQ(lines, (std::vector<std::string>{"a", "", "bc", "d"}));
  EXPECT_EQ(reader.number(), 4);
  write("long.txt", "ab\nabc\n");
  LineReader bounded(file("long.txt"), 2, "a test line");
  EXPECT_TRUE(bounded.next(line));
  EXPECT_THROW(bounded.next(line), DataError);
}
