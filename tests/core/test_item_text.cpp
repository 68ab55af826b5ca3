// The text of outfit items: the released loader's text key, categories.csv, and the embedded
// benchmark's stand-in text features.
#include <gtest/gtest.h>
#include <algorithm>

#include <unistd.h>

#include <cmath>
#include <fstream>

#include "wscsl/data/item_text.hpp"
#include "wscsl/data/outfit_benchmark.hpp"
#include "wscsl/error.hpp"

namespace fs = std::filesystem;
using namespace wscsl;

namespace {

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    s += a[i] * b[i];
  return s;
}

std::string category_error(const std::string& content) {
  const fs::path file =
      fs::temp_directory_path() / ("wscsl_categories_" + std::to_string(::getpid()) + ".csv");
  std::ofstream(file, std::ios::binary) << content;
  std::string message = "(no error)";
  try {
    read_category_names(file);
  } catch (const DataError& e) {
    message = e.what();
  }
  fs::remove(file);
  return message;
}

}  // namespace

TEST(ItemText, NormalisationRemovesLineBreaksAndNonAsciiThenTrimsAndLowerCases) {
  EXPECT_EQ(normalised_text("Red Striped T-Shirt"), "red striped t-shirt");
  // A line break is removed, not replaced: the words around it join, as in the released loader.
  EXPECT_EQ(normalised_text("Red\nShirt"), "redshirt");
  EXPECT_EQ(normalised_text(" Red shirt\n"), "red shirt");
  // Non-ASCII characters (every byte of their UTF-8) are dropped, then the ends trimmed.
  EXPECT_EQ(normalised_text("Ma\u00f1ana top"), "maana top");
  EXPECT_EQ(normalised_text("\xc3\x89t\xc3\xa9 caf\xc3\xa9 \xe2\x80\x94"), "t caf");
  EXPECT_EQ(normalised_text("\t  Wide  Trousers \r\v\f"), "wide  trousers");
  // Only the ends are trimmed; a carriage return inside stays, as Python's strip() leaves it.
  EXPECT_EQ(normalised_text("a\rb"), "a\rb");
  EXPECT_EQ(normalised_text("Skirt, Size M"), "skirt, size m");
  EXPECT_EQ(normalised_text(""), "");
  EXPECT_EQ(normalised_text(" \n\xc2\xa0 "), "");
}

TEST(ItemText, TheKeyIsTheTitleOrElseTheUrlName) {
  EXPECT_EQ(polyvore_text_key("Blue Coat", "blue-coat-123"), "blue coat");
  EXPECT_EQ(polyvore_text_key("", "Blue-Coat-123\n"), "blue-coat-123");
  EXPECT_EQ(polyvore_text_key("", ""), "");
  // The fallback is decided on the raw title: one of only spaces gives no text.
  EXPECT_EQ(polyvore_text_key("  ", "blue-coat"), "");
}

TEST(ItemText, CategoriesCsvGivesTheFineGrainedNameOfEveryCategoryId) {
  const fs::path file =
      fs::temp_directory_path() / ("wscsl_categories_ok_" + std::to_string(::getpid()) + ".csv");
  std::ofstream(file, std::ios::binary)
      << "2,Day Dresses,all-body\n\n3,\"Shorts, Denim\",bottoms\r\n4,Tops,tops";
  const std::map<std::string, std::string> names = read_category_names(file);
  fs::remove(file);
  EXPECT_EQ(names, (std::map<std::string, std::string>{
                       {"2", "Day Dresses"}, {"3", "Shorts, Denim"}, {"4", "Tops"}}));
}

TEST(ItemText, AMalformedCategoriesCsvIsOneSentenceNamingFileAndLine) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"2,Day Dresses,all-body\n3,Shorts\n",
       ".csv:2: expected 3 fields (category_id, "
       "fine-grained category, semantic category), found 2"},
      {"2,Day Dresses,all-body\n3,,bottoms\n", ".csv:2: the fine-grained category is empty"},
      {"2,Day Dresses,all-body\n2,Gowns,all-body\n", ".csv:2: category_id '2' is listed again"},
      {"2,\"Day Dresses,all-body\n", ".csv:1: unterminated quoted field"},
      {"", ".csv:1: the file has no rows; expected one per category_id"},
  };
  for (const auto& [content, expected] : cases) {
    const std::string message = category_error(content);
    EXPECT_NE(message.find(expected), std::string::npos) << message << "\nexpected: " << expected;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(ItemText, TextFeaturesAreSparseUnitVectorsOfTheWords) {
  using data::text_feature;
  const std::vector<double> a = text_feature("aster red striped t-shirt, size m");
  ASSERT_EQ(a.size(), static_cast<std::size_t>(data::kTextFeatureSize));
  EXPECT_NEAR(dot(a, a), 1.0, 1e-12);
  const auto nonzero = std::count_if(a.begin(), a.end(), [](double x) { return x != 0; });
  EXPECT_GT(nonzero, 40);  // 7 words of 8 values, a few sharing a position
  EXPECT_LE(nonzero, 56);
  // A function of the words only: the url_name of a title has its features.
  EXPECT_EQ(text_feature("red striped skirt"), text_feature("red-striped-skirt"));
  EXPECT_EQ(text_feature("red skirt"), text_feature("red skirt"));
  // Shared words make keys similar: this is how text tells the style.
  EXPECT_GT(dot(text_feature("red skirt"), text_feature("red coat")), 0.3);
  EXPECT_LT(std::abs(dot(text_feature("red skirt"), text_feature("blue coat"))), 0.1);
  const std::vector<double> none = text_feature(", -");
  EXPECT_TRUE(std::all_of(none.begin(), none.end(), [](double x) { return x == 0; }));
}
