// The readers of core/formats that precomputed_text uses: HGLMM text and .npy matrices with keys.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "npy_bytes.hpp"
#include "wscsl/data/text_features.hpp"
#include "wscsl/error.hpp"
#include "wscsl/testing/image_fixtures.hpp"

namespace fs = std::filesystem;
using namespace wscsl;

namespace {

std::vector<float> row_of(const TextFeatureTable& t, const std::string& key) {
  const std::int64_t r = t.find(key);
  if (r < 0) return {};
  return std::vector<float>(t.row(r), t.row(r) + t.dim());
}

template <class Read>
std::string error_of(Read&& read) {
  try {
    read();
  } catch (const DataError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string hglmm_error(const std::string& text, std::int64_t dim) {
  return error_of([&] { parse_hglmm_features(text, "f.txt", dim); });
}

std::string npy_error(const std::string& bytes) {
  return error_of([&] { parse_npy_matrix(bytes, "f.npy"); });
}

}  // namespace

TEST(HglmmFeatures, TheLastDimFieldsAreTheFeatureAndTheRestIsTheKey) {
  const TextFeatureTable t = parse_hglmm_features(
      "red, white and blue dress,0.5,-1,2e-3\r\n"
      "\n"
      "  shoes , 1 , 2 ,+3  \n"
      "plain,0,0,0",
      "f.txt", 3);
  EXPECT_EQ(t.size(), 3);
  EXPECT_EQ(t.dim(), 3);
  EXPECT_EQ(row_of(t, "red, white and blue dress"), (std::vector<float>{0.5f, -1.0f, 2e-3f}));
  // Stripped like the released loader's line.strip(); the key keeps its inner spaces.
  EXPECT_EQ(row_of(t, "shoes "), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(row_of(t, "plain"), (std::vector<float>{0, 0, 0}));
  EXPECT_EQ(t.find("red"), -1);
  EXPECT_EQ(t.find("Plain"), -1) << "keys are exact";
}

TEST(HglmmFeatures, WrittenLinesReadBackToFourSignificantDigits) {
  std::string text;
  append_hglmm_line(text, "red, wool", {0.0, 0.123456, -25.0});
  append_hglmm_line(text, "blue", {1.0, 0.0, 0.0});
  EXPECT_EQ(text, "red, wool,0,0.1235,-25\nblue,1,0,0\n");
  const TextFeatureTable table = parse_hglmm_features(text, "written.txt", 3);
  ASSERT_EQ(table.size(), 2);
  const std::int64_t red = table.find("red, wool");
  ASSERT_GE(red, 0);
  EXPECT_EQ(table.row(red)[0], 0.0f);
  EXPECT_EQ(table.row(red)[1], 0.1235f);
  EXPECT_EQ(table.row(red)[2], -25.0f);
}

TEST(HglmmFeatures, ARepeatedKeyWithTheSameValuesIsKeptOnce) {
  const TextFeatureTable t = parse_hglmm_features("a,1,2\nb,3,4\na,1,2\n", "f.txt", 2);
  EXPECT_EQ(t.size(), 2);
  EXPECT_EQ(row_of(t, "a"), (std::vector<float>{1, 2}));
}

TEST(HglmmFeatures, EveryMalformedFileIsOneSentenceNamingTheLine) {
  EXPECT_EQ(hglmm_error("a,1,2\nb,1\n", 2),
            "f.txt:2: 2 comma-separated fields; expected a key followed by 2 values (dim)");
  EXPECT_EQ(hglmm_error("a,1,x2\n", 2),
            "f.txt:1: value 2 of 2 is 'x2'; expected a finite decimal number within float32");
  EXPECT_EQ(hglmm_error("a,1,nan\n", 2),
            "f.txt:1: value 2 of 2 is 'nan'; expected a finite decimal number within float32");
  EXPECT_EQ(hglmm_error("a,1,1e39\n", 2),
            "f.txt:1: value 2 of 2 is '1e39'; expected a finite decimal number within float32");
  EXPECT_EQ(hglmm_error("a,1,\n", 2),
            "f.txt:1: value 2 of 2 is ''; expected a finite decimal number within float32");
  EXPECT_EQ(hglmm_error(",1,2\n", 2), "f.txt:1: no key before the 2 values; expected its text");
  EXPECT_EQ(hglmm_error("a," + std::string(hglmm_max_line_bytes(2), '1') + ",2\n", 2),
            fmt::format("f.txt:1: the line is longer than {} bytes, the bound of an HGLMM line of "
                        "2 values",
                        hglmm_max_line_bytes(2)));
  EXPECT_EQ(hglmm_error("a,1,\x1b[31m" + std::string(300, 'x') + "\n", 2),
            "f.txt:1: value 2 of 2 is '\\x1b[31m" + std::string(195, 'x') +
                "\u2026' (105 more bytes); expected a finite decimal number within float32");
  EXPECT_EQ(hglmm_error("", 2),
            "f.txt: no feature line; expected one line per text, its key followed by 2 values");
  EXPECT_EQ(hglmm_error("\n  \n", 2),
            "f.txt: no feature line; expected one line per text, its key followed by 2 values");
  // Three values per line read with dim = 2: every key would end with a number.
  EXPECT_EQ(hglmm_error("a,1,2,3\nb,4,5,6\n", 2),
            "f.txt:1: every line has a number just before its last 2 values: the features are "
            "longer than dim = 2");
}

TEST(HglmmFeatures, TheFileIsReadLineByLine) {
  wscsl::testing::ScratchDir dir("hglmm");
  wscsl::testing::write_text(dir.path() / "f.txt", "x, y,1,2\nz,3,4\n");
  const TextFeatureTable t = read_hglmm_features(dir.path() / "f.txt", 2);
  EXPECT_EQ(row_of(t, "x, y"), (std::vector<float>{1, 2}));
  EXPECT_EQ(row_of(t, "z"), (std::vector<float>{3, 4}));
  const std::string missing = (dir.path() / "absent.txt").string();
  EXPECT_EQ(error_of([&] { read_hglmm_features(missing, 2); }), missing + ": no such file");
  EXPECT_EQ(error_of([&] { read_hglmm_features(dir.path(), 2); }),
            dir.path().string() + ": is a directory; expected a regular file");
}

// As the released loader's dict: a repeated key takes the values of its last line, and the
// repeats are counted for a warning.
TEST(HglmmFeatures, ARepeatedKeyKeepsItsLastValues) {
  const TextFeatureTable t = parse_hglmm_features("a,1,2\nb,0,0\na,1,3\na,5,6\n", "f.txt", 2);
  EXPECT_EQ(t.size(), 2);
  EXPECT_EQ(row_of(t, "a"), (std::vector<float>{5, 6}));
  EXPECT_EQ(row_of(t, "b"), (std::vector<float>{0, 0}));
  EXPECT_EQ(t.repeated_keys(), 2);
  EXPECT_EQ(t.first_repeat(), "line 3 repeats the key 'a' of line 1");
}

// A line that never ends is refused at the bound, before the rest of it is held.
TEST(HglmmFeatures, ALineIsRefusedAtItsBound) {
  wscsl::testing::ScratchDir dir("hglmm_long");
  const fs::path file = dir.path() / "f.txt";
  std::ofstream(file) << "a,1,2\nb," << std::string(hglmm_max_line_bytes(2) + 10, '0');
  EXPECT_EQ(error_of([&] { read_hglmm_features(file, 2); }),
            fmt::format("{}:2: the line is longer than {} bytes, the bound of an HGLMM line of 2 "
                        "values (64 KiB of key, 64 bytes a value)",
                        file.string(), hglmm_max_line_bytes(2)));
}

TEST(NpyMatrix, ReadsFloat32AndFloat64InBothOrders) {
  const NpyMatrix m = parse_npy_matrix(npy_bytes::matrix({1, 2, 3, 4, 5, 6}, 2, 3), "f.npy");
  EXPECT_EQ(m.rows, 2);
  EXPECT_EQ(m.cols, 3);
  EXPECT_EQ(m.values, (std::vector<float>{1, 2, 3, 4, 5, 6}));
  const NpyMatrix d = parse_npy_matrix(
      npy_header_of_dictionary("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }") +
          npy_bytes::data(std::vector<double>{1, 4, 2, 5, 3, 6}),
      "f.npy");
  EXPECT_EQ(d.values, (std::vector<float>{1, 2, 3, 4, 5, 6})) << "column-major data";
}

TEST(NpyMatrix, EveryMalformedFileIsOneSentenceNamingTheByte) {
  const std::string two_by_two = npy_bytes::matrix({1, 2, 3, 4}, 2, 2);
  EXPECT_EQ(npy_error("PK\x03\x04"),
            "f.npy: byte 0: the file does not start with \\x93NUMPY; expected a NumPy .npy file");
  EXPECT_EQ(npy_error(two_by_two.substr(0, 8)),
            "f.npy: byte 8: the file ends where the header length was expected");
  EXPECT_EQ(npy_error(two_by_two.substr(0, 40)),
            "f.npy: byte 10: the header of 118 bytes runs past the end of the file");
  EXPECT_EQ(npy_error(two_by_two.substr(0, two_by_two.size() - 1)),
            "f.npy: byte 128: 15 bytes of data follow the header; a (2, 2) matrix of <f4 needs 16");
  EXPECT_EQ(npy_error(npy_header_of_dictionary(
                          "{'descr': '<i8', 'fortran_order': False, 'shape': (1, 1), }") +
                      npy_bytes::data(std::vector<std::int64_t>{1})),
            "f.npy: byte 128: the dtype is '<i8'; expected '<f4' (float32) or '<f8' (float64)");
  EXPECT_EQ(
      npy_error(
          npy_header_of_dictionary("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }") +
          npy_bytes::data(std::vector<float>{1, 2, 3, 4})),
      "f.npy: byte 128: the shape is not (N, F) with N, F ≥ 1; expected a matrix of one row per "
      "key");
  EXPECT_EQ(
      npy_error(npy_header_of_dictionary("{'descr': '<f4', 'fortran_order': False, 'shape': (1, "
                                         "1), 'extra': 1, }")),
      "f.npy: byte 68: unknown header key 'extra'; expected descr, fortran_order and shape");
  EXPECT_EQ(npy_error(npy_header_of_dictionary("{'descr': '<f4', 'shape': (1, 1), }")),
            "f.npy: byte 64: the header has no 'fortran_order'");
  EXPECT_EQ(npy_error(npy_bytes::matrix({1, std::numeric_limits<float>::infinity()}, 1, 2)),
            "f.npy: byte 132: the value at row 0, column 1 is inf; expected a finite float32");
  EXPECT_EQ(
      npy_error(
          npy_header_of_dictionary("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 65537), "
                                   "}")),
      "f.npy: byte 128: the shape (1, 65537) has more than 65536 columns; expected one feature of "
      "at most that many values per row");
}

// The header is read first: a shape past the bound is refused without reading the data.
TEST(NpyMatrix, AFileIsRefusedByItsHeader) {
  wscsl::testing::ScratchDir dir("npy_header");
  const fs::path file = dir.path() / "wide.npy";
  {
    std::ofstream out(file, std::ios::binary);
    out << npy_header_of_dictionary(
        "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 30000000), }");
    out.seekp(std::streamoff{128} + 120000000 - 1);
    out.put('\0');
  }
  EXPECT_EQ(error_of([&] { read_npy_matrix(file); }),
            file.string() +
                ": byte 128: the shape (1, 30000000) has more than 65536 columns; expected one "
                "feature of at most that many values per row");
}

TEST(NpyTextFeatures, RowIIsTheTextOnLineIOfTheKeys) {
  wscsl::testing::ScratchDir dir("npy_keys");
  wscsl::testing::write_text(dir.path() / "keys.txt", "a, with comma\r\nb\n");
  const std::vector<std::string> keys = read_text_keys(dir.path() / "keys.txt");
  const NpyMatrix m = parse_npy_matrix(npy_bytes::matrix({1, 2, 3, 4}, 2, 2), "f.npy");
  const TextFeatureTable t = text_features_from_npy(m, "f.npy", keys, "keys.txt");
  EXPECT_EQ(row_of(t, "a, with comma"), (std::vector<float>{1, 2}));
  EXPECT_EQ(row_of(t, "b"), (std::vector<float>{3, 4}));

  EXPECT_EQ(error_of([&] { text_features_from_npy(m, "f.npy", {"a"}, "keys.txt"); }),
            "keys.txt lists 1 keys and f.npy has 2 rows; expected one key per row");
  const TextFeatureTable repeated = text_features_from_npy(m, "f.npy", {"a", "a"}, "keys.txt");
  EXPECT_EQ(row_of(repeated, "a"), (std::vector<float>{3, 4}));
  EXPECT_EQ(repeated.repeated_keys(), 1);
  wscsl::testing::write_text(dir.path() / "gap.txt", "a\n\nb\n");
  EXPECT_EQ(error_of([&] { read_text_keys(dir.path() / "gap.txt"); }),
            (dir.path() / "gap.txt").string() + ":2: an empty line; expected the text of row 1");
  wscsl::testing::write_text(dir.path() / "none.txt", "");
  EXPECT_EQ(error_of([&] { read_text_keys(dir.path() / "none.txt"); }),
            (dir.path() / "none.txt").string() +
                ": no keys; expected the text of each row, one per line");
}
