// The shared image-dataset machinery: PIL-exact resampling, torchvision's crop rounding, image
// decoding with its refusals, strict CSV reading, the triplet-drawing rule and the splits' names.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "wscsl/data/csv.hpp"
#include "wscsl/data/image_file.hpp"
#include "wscsl/data/resample.hpp"
#include "wscsl/data/triplets.hpp"
#include "wscsl/error.hpp"
#include "wscsl/plugin/dataset.hpp"
#include "wscsl/testing/image_fixtures.hpp"
#include "wscsl/util/atomic_file.hpp"

namespace fs = std::filesystem;
using namespace wscsl;

namespace {

Image8 gray_row(std::vector<std::uint8_t> values) {
  Image8 image;
  image.width = static_cast<int>(values.size());
  image.height = 1;
  image.channels = 1;
  image.pixels = std::move(values);
  return image;
}

// A naive PIL-bilinear reference: per output pixel, the normalised triangle weights over the
// input pixels inside the (scaled) support, in double precision, rounded after each pass.
std::vector<double> reference_axis(const std::vector<double>& in, int out_size) {
  const int n = static_cast<int>(in.size());
  const double scale = static_cast<double>(n) / out_size;
  const double fs = std::max(1.0, scale);
  std::vector<double> out;
  for (int o = 0; o < out_size; ++o) {
    const double center = (o + 0.5) * scale;
    double sum = 0, total = 0;
    for (int x = 0; x < n; ++x) {
      if (x + 0.5 < center - fs || x + 0.5 > center + fs) continue;
      const double w = std::max(0.0, 1.0 - std::fabs((x + 0.5 - center) / fs));
      sum += w * in[static_cast<std::size_t>(x)];
      total += w;
    }
    out.push_back(std::round(sum / total));
  }
  return out;
}

// A file in this process's scratch directory, removed when the tests end.
fs::path temp(const std::string& name) {
  static const struct Scratch {
    fs::path dir = fs::temp_directory_path() / fmt::format("wscsl_data_{}", ::getpid());
    ~Scratch() { fs::remove_all(dir); }
  } scratch;
  fs::create_directories(scratch.dir);
  return scratch.dir / name;
}

}  // namespace

TEST(Splits, EachNameParsesBackToItsSplitAndNoOtherNameParses) {
  EXPECT_EQ(split_name(Split::Train), "train");
  EXPECT_EQ(split_name(Split::Val), "val");
  EXPECT_EQ(split_name(Split::Test), "test");
  for (Split split : kAllSplits) {
    Split parsed = split == Split::Train ? Split::Test : Split::Train;
    EXPECT_TRUE(parse_split(split_name(split), parsed));
    EXPECT_EQ(parsed, split);
  }
  Split untouched = Split::Val;
  for (const char* name : {"valid", "Train", "", "t10k"}) {
    EXPECT_FALSE(parse_split(name, untouched)) << name;
    EXPECT_EQ(untouched, Split::Val) << name;
  }
}

TEST(Resample, DownsamplingAveragesOverTheScaledTriangle) {
  // Worked by hand: 4 → 2, support 2; output 0 weighs inputs 0..2 by 0.75, 0.75, 0.25 (/1.75).
  const Image8 out = resize_bilinear(gray_row({0, 100, 200, 255}), 2, 1);
  EXPECT_EQ(out.pixels, (std::vector<std::uint8_t>{71, 209}));
}

TEST(Resample, UpsamplingIsHalfPixelBilinear) {
  const Image8 out = resize_bilinear(gray_row({0, 200}), 4, 1);
  EXPECT_EQ(out.pixels, (std::vector<std::uint8_t>{0, 50, 150, 200}));
}

TEST(Resample, MatchesANaiveSeparableReferenceWithinOneLevel) {
  const Image8 image = wscsl::testing::pattern_image(37, 23, 5);
  for (const auto& [w, h] : std::vector<std::pair<int, int>>{{13, 9}, {50, 31}, {20, 23}}) {
    const Image8 out = resize_bilinear(image, w, h);
    for (int c = 0; c < 3; ++c) {
      std::vector<std::vector<double>> rows;
      for (int y = 0; y < image.height; ++y) {
        std::vector<double> row;
        for (int x = 0; x < image.width; ++x)
          row.push_back(image.row(y)[x * 3 + c]);
        rows.push_back(w == image.width ? row : reference_axis(row, w));
      }
      for (int x = 0; x < w; ++x) {
        std::vector<double> column;
        for (int y = 0; y < image.height; ++y)
          column.push_back(rows[static_cast<std::size_t>(y)][static_cast<std::size_t>(x)]);
        const std::vector<double> ref = h == image.height ? column : reference_axis(column, h);
        for (int y = 0; y < h; ++y)
          EXPECT_NEAR(out.row(y)[x * 3 + c], ref[static_cast<std::size_t>(y)], 1.0)
              << w << "×" << h << " at " << x << "," << y;
      }
    }
  }
}

TEST(Resample, TorchvisionSizesAndBankersRoundedCrops) {
  EXPECT_EQ(shorter_side_size(136, 102, 112), (std::pair<int, int>{149, 112}));  // UT-Zappos
  EXPECT_EQ(shorter_side_size(178, 218, 112), (std::pair<int, int>{112, 137}));  // Celeb-A
  EXPECT_EQ(center_crop_offset(149, 112), 18);                                   // round(18.5) = 18
  EXPECT_EQ(center_crop_offset(137, 112), 12);                                   // round(12.5) = 12
  EXPECT_EQ(center_crop_offset(113, 112), 0);                                    // round(0.5) = 0
  EXPECT_EQ(center_crop_offset(115, 112), 2);                                    // round(1.5) = 2
  EXPECT_EQ(center_crop_offset(116, 112), 2);
}

TEST(Resample, CropTakesTheCentreChannelMajor) {
  Image8 image = wscsl::testing::pattern_image(5, 3, 1);  // already 3 high: only the crop acts
  std::vector<std::uint8_t> out(3 * 3 * 3);
  resize_and_center_crop(image, 3, out.data());
  for (int c = 0; c < 3; ++c)
    for (int y = 0; y < 3; ++y)
      for (int x = 0; x < 3; ++x)
        EXPECT_EQ(out[static_cast<std::size_t>((c * 3 + y) * 3 + x)],
                  image.row(y)[(x + 1) * 3 + c]);  // offset round(1.0) = 1
}

TEST(ImageFile, PngRoundTripsAndGrayBecomesRgb) {
  const Image8 image = wscsl::testing::pattern_image(7, 5, 3);
  write_image_file(temp("a.png"), image);
  const DecodedImage back = read_image_file(temp("a.png"), kDefaultMaxImagePixels);
  ASSERT_TRUE(back.problem.empty()) << back.problem;
  EXPECT_EQ(back.image.pixels, image.pixels);
  Image8 gray = gray_row({10, 20, 30});
  write_image_file(temp("g.png"), gray);
  const DecodedImage g = read_image_file(temp("g.png"), kDefaultMaxImagePixels);
  EXPECT_EQ(g.image.channels, 3);
  EXPECT_EQ(g.image.pixels, (std::vector<std::uint8_t>{10, 10, 10, 20, 20, 20, 30, 30, 30}));
}

TEST(ImageFile, RefusesBrokenFilesWithAReason) {
  const Image8 image = wscsl::testing::pattern_image(16, 16, 3);
  for (const char* name : {"t.png", "t.jpg"}) {
    write_image_file(temp(name), image);
    std::ifstream in(temp(name), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), {});
    EXPECT_TRUE(decode_image(bytes, kDefaultMaxImagePixels).problem.empty());
    const DecodedImage cut =
        decode_image(bytes.substr(0, bytes.size() - 12), kDefaultMaxImagePixels);
    EXPECT_NE(cut.problem.find("truncated"), std::string::npos) << name << ": " << cut.problem;
    const DecodedImage big = decode_image(bytes, 255);
    EXPECT_NE(big.problem.find("more than max_image_pixels = 255"), std::string::npos)
        << big.problem;
  }
  EXPECT_EQ(decode_image("", 100).problem, "empty file");
  EXPECT_EQ(decode_image("GIF89a......", 100).problem, "not a JPEG or PNG file");
  EXPECT_NE(read_image_file(temp("missing.png"), 100).problem.find("cannot open"),
            std::string::npos);
}

// A damaged PNG is refused by the CRC of the chunk it damaged, before libpng could print its own
// complaint on stderr.
TEST(ImageFile, ADamagedPngIsRefusedQuietlyByItsChunkCrc) {
  write_image_file(temp("d.png"), wscsl::testing::pattern_image(16, 16, 3));
  std::ifstream in(temp("d.png"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  const std::size_t idat = bytes.find("IDAT");
  ASSERT_NE(idat, std::string::npos);
  bytes[idat + 10] ^= 0x40;
  ::testing::internal::CaptureStderr();
  const DecodedImage damaged = decode_image(bytes, kDefaultMaxImagePixels);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(
      damaged.problem,
      fmt::format("corrupt PNG (the CRC of its IDAT chunk at byte {} does not match)", idat - 4));
}

TEST(Csv, QuotedFieldsAndLineNumbers) {
  wscsl::testing::write_text(
      temp("q.csv"), "file,note\r\na.png,\"x, y\"\n\nb.png,\"two\nlines \"\"q\"\"\"\nc.png,z\n");
  BadRows none;
  const CsvTable t = read_csv(temp("q.csv"), none);
  ASSERT_EQ(t.rows.size(), 3u);
  EXPECT_EQ(t.rows[0][1], "x, y");
  EXPECT_EQ(t.rows[1][1], "two\nlines \"q\"");
  EXPECT_EQ(t.lines, (std::vector<std::int64_t>{2, 4, 6}));
  EXPECT_EQ(csv_field("two\nlines \"q\""), "\"two\nlines \"\"q\"\"\"");
}

TEST(Csv, ASpreadsheetsByteOrderMarkAndCrlfAreAccepted) {
  std::ofstream(temp("bom.csv"), std::ios::binary) << "\xEF\xBB\xBF"
                                                      "file,color\r\na.png,red\r\n";
  BadRows none(0);
  const CsvTable t = read_csv(temp("bom.csv"), none);
  EXPECT_EQ(t.column("file"), 0);
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.rows[0][1], "red");
}

TEST(ReadFile, RefusesWhatIsNotABoundedRegularFile) {
  const auto message = [](const fs::path& path, std::uintmax_t limit) {
    try {
      read_text_file(path, limit);
    } catch (const DataError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message("/dev/zero", kMaxTextFileBytes),
            "/dev/zero: is a character device; expected a regular file");
  const fs::path fifo = temp("fifo");
  fs::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(message(fifo, kMaxTextFileBytes),
            fifo.string() + ": is a FIFO; expected a regular file");
  const fs::path link = temp("to_zero");
  fs::remove(link);
  fs::create_symlink("/dev/zero", link);
  EXPECT_EQ(
      message(link, kMaxTextFileBytes),
      link.string() + ": is a character device (a link to /dev/zero); expected a regular file");
  EXPECT_EQ(message(fs::temp_directory_path(), kMaxTextFileBytes),
            fs::temp_directory_path().string() + ": is a directory; expected a regular file");
  // An optional file: absent is fine, anything but a regular file is named.
  EXPECT_FALSE(optional_file_present(temp("absent.csv")));
  EXPECT_THROW(optional_file_present(fifo), DataError);
  EXPECT_THROW(optional_file_present(link), DataError);
  std::ofstream(temp("big.csv")) << std::string(100, 'x');
  EXPECT_EQ(message(temp("big.csv"), 64),
            temp("big.csv").string() + ": 100 bytes, more than the 64 this kind of file may have");
  EXPECT_EQ(message(temp("missing.csv"), 64), temp("missing.csv").string() + ": no such file");
}

TEST(Csv, MalformedRecordsNameFileAndLine) {
  const fs::path file = temp("bad.csv");
  const auto error = [&](const std::string& text) {
    wscsl::testing::write_text(file, text);
    BadRows none;
    try {
      read_csv(file, none);
    } catch (const DataError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(error("a,b\n1,2\n1,2,3\n"), file.string() + ":3: expected 2 fields (a, b), found 3");
  EXPECT_EQ(error("a,b\n\"1,2\n"), file.string() + ":2: unterminated quoted field");
  EXPECT_EQ(error("a,b\n\"1\"x,2\n"),
            file.string() + ":2: text after the closing quote of field 1");
  EXPECT_EQ(error("a,a\n"), file.string() + ":1: the header names column 'a' twice");
  wscsl::testing::write_text(file, "a,b\n1\n2,3\n4\n");
  BadRows two(2);
  EXPECT_EQ(read_csv(file, two).rows.size(), 1u);
  EXPECT_EQ(two.count(), 2);
}

TEST(Triplets, CategoricalRuleAndDeterminism) {
  const std::vector<double> values = {0, 1, 0, 2, 1, NAN, 0, -1, 2};
  const std::vector<std::int64_t> members = {0, 1, 2, 3, 4, 5, 6, 7};  // 8 is not a member
  Rng rng(4), again(4);
  std::vector<Triplet> a, b;
  draw_condition_triplets(values, members, {}, 3, "c", 200, rng, a);
  draw_condition_triplets(values, members, {}, 3, "c", 200, again, b);
  ASSERT_EQ(a.size(), 200u);
  for (std::size_t i = 0; i < a.size(); ++i) {
    const Triplet& t = a[i];
    EXPECT_EQ(t.condition, 3);
    EXPECT_NE(t.anchor, t.close);
    EXPECT_EQ(values[t.anchor], values[t.close]);
    EXPECT_NE(values[t.anchor], values[t.far]);
    for (std::int64_t id : {t.anchor, t.close, t.far}) {
      EXPECT_TRUE(id != 5 && id != 7 && id != 8) << id;  // unknown values and non-members
    }
    EXPECT_EQ(t.anchor, b[i].anchor);
    EXPECT_EQ(t.far, b[i].far);
  }
}

TEST(Triplets, NumericRuleByCloseness) {
  const std::vector<double> heel = {0.5, 1.0, 1.2, 3.0, 3.4, 6.0};
  const std::vector<std::int64_t> members = {0, 1, 2, 3, 4, 5};
  TripletRule rule{true, 0.5, 1.5};
  Rng rng(9);
  std::vector<Triplet> out;
  draw_condition_triplets(heel, members, rule, 0, "heel", 300, rng, out);
  for (const Triplet& t : out) {
    EXPECT_LE(std::fabs(heel[t.anchor] - heel[t.close]), 0.5);
    EXPECT_GT(std::fabs(heel[t.anchor] - heel[t.far]), 1.5);
  }
  // 6.0 has no neighbour within 0.5, so it never anchors.
  for (const Triplet& t : out)
    EXPECT_NE(t.anchor, 5);
}

TEST(Triplets, ImpossibleRulesAreExplained) {
  Rng rng(1);
  std::vector<Triplet> out;
  try {
    draw_condition_triplets({1, 1, 1}, {0, 1, 2}, {}, 0, "color", 5, rng, out);
    FAIL();
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("condition 'color': all 3 images"), std::string::npos);
  }
  EXPECT_THROW(draw_condition_triplets({0, 5, 10}, {0, 1, 2}, {true, 1, 2}, 0, "size", 5, rng, out),
               DataError);
  EXPECT_EQ(equal_shares(10, 4), (std::vector<std::int64_t>{3, 3, 2, 2}));
}
