// The embedded outfit benchmark: the plan's properties and sanity figures (medium preset, in
// memory), the files it writes (tiny preset) and the stamp, lock and staging folder.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "wscsl/data/idx_reader.hpp"
#include "wscsl/data/image_file.hpp"
#include "wscsl/data/item_text.hpp"
#include "wscsl/data/outfit_benchmark.hpp"
#include "wscsl/error.hpp"
#include "wscsl/util/rng.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace wscsl;
using namespace wscsl::data;

namespace {

const fs::path kFashionMnist = "/usr/share/datasets/fashion-mnist";

const std::vector<std::uint8_t>& labels() {
  static const std::vector<std::uint8_t> l = read_fashion_mnist(kFashionMnist, "train").labels.data;
  return l;
}

const OutfitBenchmarkPlan& medium() {
  static const OutfitBenchmarkPlan plan = [] {
    const auto start = std::chrono::steady_clock::now();
    OutfitBenchmarkPlan p =
        plan_outfit_benchmark({OutfitPreset::Medium, 1, kFashionMnist}, labels());
    std::printf("medium plan drawn in %.2f s\n",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    return p;
  }();
  return plan;
}

const BenchmarkItem& item_at(const OutfitBenchmarkPlan& plan, const OutfitSlot& s) {
  const auto& outfit = plan.outfits[static_cast<std::size_t>(s.outfit)];
  return plan.items[static_cast<std::size_t>(outfit.items[static_cast<std::size_t>(s.position)])];
}

// ROC AUC of `scores` (higher = more likely positive), ties counted as half.
double roc_auc(const std::vector<double>& scores, const std::vector<bool>& positive) {
  std::vector<std::size_t> order(scores.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(), [&](auto a, auto b) { return scores[a] < scores[b]; });
  double rank_sum = 0, positives = 0;
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j < order.size() && scores[order[j]] == scores[order[i]])
      ++j;
    const double mean_rank = (static_cast<double>(i) + static_cast<double>(j) + 1) / 2;
    for (std::size_t k = i; k < j; ++k)
      if (positive[order[k]]) rank_sum += mean_rank, positives += 1;
    i = j;
  }
  const double negatives = static_cast<double>(scores.size()) - positives;
  return (rank_sum - positives * (positives + 1) / 2) / (positives * negatives);
}

using Distance = std::function<double(const BenchmarkItem&, const BenchmarkItem&)>;

struct Figures {
  double auc = 0, fitb = 0;
};

// Scores a split as the outfit evaluators will: an outfit by the mean distance over its item
// pairs, a question by the candidate with the smallest summed distance (the first on ties).
Figures score(const OutfitBenchmarkPlan& plan, const SplitPlan& split, const Distance& d) {
  std::vector<double> scores;
  std::vector<bool> positive;
  for (const CompatibilityLine& line : split.compatibility) {
    double sum = 0;
    int pairs = 0;
    for (std::size_t i = 0; i < line.items.size(); ++i)
      for (std::size_t j = i + 1; j < line.items.size(); ++j, ++pairs)
        sum += d(item_at(plan, line.items[i]), item_at(plan, line.items[j]));
    scores.push_back(-sum / std::max(pairs, 1));
    positive.push_back(line.compatible);
  }
  int right = 0;
  for (const BlankQuestion& q : split.blanks) {
    int best = 0;
    double best_sum = 0;
    for (int a = 0; a < 4; ++a) {
      double sum = 0;
      for (const OutfitSlot& s : q.question)
        sum += d(item_at(plan, q.answers[static_cast<std::size_t>(a)]), item_at(plan, s));
      if (a == 0 || sum < best_sum) best = a, best_sum = sum;
    }
    right += best == q.correct;
  }
  return {roc_auc(scores, positive),
          static_cast<double>(right) / static_cast<double>(split.blanks.size())};
}

Distance random_embedding(std::uint64_t seed) {
  auto table = std::make_shared<std::map<const BenchmarkItem*, std::vector<double>>>();
  auto rng = std::make_shared<Rng>(seed);
  auto embed = [table, rng](const BenchmarkItem& item) -> const std::vector<double>& {
    auto& v = (*table)[&item];
    if (v.empty())
      for (int k = 0; k < 16; ++k)
        v.push_back(2 * rng->uniform() - 1);
    return v;
  };
  return [embed](const BenchmarkItem& a, const BenchmarkItem& b) {
    const auto &x = embed(a), &y = embed(b);
    double s = 0;
    for (std::size_t k = 0; k < x.size(); ++k)
      s += (x[k] - y[k]) * (x[k] - y[k]);
    return std::sqrt(s);
  };
}

// 1 − the cosine of the two items' text features (text_feature of their keys); 1 when either has
// no text.
Distance text_distance() {
  using Sparse = std::vector<std::pair<std::size_t, double>>;
  auto table = std::make_shared<std::map<const BenchmarkItem*, Sparse>>();
  auto sparse = [table](const BenchmarkItem& item) -> const Sparse& {
    const auto [it, fresh] = table->try_emplace(&item);
    if (fresh) {
      const std::vector<double> f = text_feature(polyvore_text_key(item.title, item.url_name));
      for (std::size_t k = 0; k < f.size(); ++k)
        if (f[k] != 0) it->second.emplace_back(k, f[k]);
    }
    return it->second;
  };
  return [sparse](const BenchmarkItem& a, const BenchmarkItem& b) {
    const Sparse &x = sparse(a), &y = sparse(b);
    double dot = 0;
    for (std::size_t i = 0, j = 0; i < x.size() && j < y.size();) {
      if (x[i].first == y[j].first) {
        dot += x[i++].second * y[j++].second;
      } else if (x[i].first < y[j].first) {
        ++i;
      } else {
        ++j;
      }
    }
    return 1 - dot;
  };
}

class TempDir {
 public:
  explicit TempDir(const std::string& tag)
      : path_(fs::temp_directory_path() /
              ("wscsl_outfits_" + tag + "_" + std::to_string(::getpid()))) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

json read_json(const fs::path& p) {
  return json::parse(read(p));
}

std::map<std::string, std::string> tree(const fs::path& root) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file()) files[fs::relative(e.path(), root).string()] = read(e.path());
  return files;
}

const OutfitBenchmarkOptions kTiny{OutfitPreset::Tiny, 7, kFashionMnist};

// One tiny benchmark, written once for the tests that only read it.
const fs::path& tiny_root() {
  static const TempDir dir("shared");
  static const fs::path root = [] {
    const auto start = std::chrono::steady_clock::now();
    ensure_outfit_benchmark(dir.path() / "tiny", kTiny);
    std::printf("tiny benchmark written in %.2f s\n",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    return dir.path() / "tiny";
  }();
  return root;
}

}  // namespace

TEST(OutfitBenchmarkPlan, OutfitSizesTypesAndFineCategories) {
  const OutfitBenchmarkPlan& plan = medium();
  std::map<std::size_t, int> sizes;
  int with_repeated_type = 0;
  std::array<int, kNumItemTypes> outfits_with{};
  for (const BenchmarkOutfit& o : plan.outfits) {
    ++sizes[o.items.size()];
    std::set<ItemType> types;
    for (std::int64_t i : o.items)
      types.insert(plan.items[static_cast<std::size_t>(i)].type);
    with_repeated_type += types.size() < o.items.size();
    for (ItemType t : types)
      ++outfits_with[static_cast<std::size_t>(t)];
    ASSERT_EQ(o.indices.front(), 1);
    for (std::size_t p = 1; p < o.indices.size(); ++p)
      ASSERT_GT(o.indices[p], o.indices[p - 1]);
  }
  EXPECT_EQ(sizes.begin()->first, 2u);
  EXPECT_EQ(sizes.rbegin()->first, 19u);
  EXPECT_GT(sizes[2], 100);
  EXPECT_GT(sizes[16] + sizes[17] + sizes[18] + sizes[19], 30);  // the long tail
  EXPECT_GT(with_repeated_type, 500);
  for (auto common : {ItemType::Tops, ItemType::Bottoms, ItemType::Shoes})
    for (auto rare : {ItemType::Scarves, ItemType::Accessories})
      EXPECT_GT(outfits_with[static_cast<std::size_t>(common)],
                3 * outfits_with[static_cast<std::size_t>(rare)]);
  // Some fine categories per type, each used.
  std::map<ItemType, std::set<int>> categories;
  for (const BenchmarkItem& item : plan.items)
    categories[item.type].insert(item.category);
  EXPECT_EQ(categories.size(), static_cast<std::size_t>(kNumItemTypes));
  for (const auto& [type, used] : categories)
    EXPECT_GE(used.size(), 2u) << item_type_name(type);
  // Text: most items have a title, some only a url_name, some neither.
  int titles = 0, url_only = 0, none = 0;
  for (const BenchmarkItem& item : plan.items) {
    titles += !item.title.empty();
    url_only += item.title.empty() && !item.url_name.empty();
    none += item.title.empty() && item.url_name.empty();
  }
  EXPECT_GT(titles, static_cast<int>(plan.items.size()) * 3 / 4);
  EXPECT_GT(url_only, 100);
  EXPECT_GT(none, 100);
  // Titles that the key's normalisation changes beyond lower-casing: padded with a line break,
  // not ASCII; and keys with commas.
  int padded = 0, non_ascii = 0, commas = 0;
  for (const BenchmarkItem& item : plan.items) {
    padded += !item.title.empty() && item.title.back() == '\n';
    non_ascii += std::any_of(item.title.begin(), item.title.end(),
                             [](char c) { return static_cast<unsigned char>(c) >= 0x80; });
    commas += polyvore_text_key(item.title, item.url_name).find(',') != std::string::npos;
  }
  EXPECT_GT(padded, 100);
  EXPECT_GT(non_ascii, 100);
  EXPECT_GT(commas, 100);
}

TEST(OutfitBenchmarkPlan, SplitsNondisjointSharesItemsDisjointDoesNot) {
  const OutfitBenchmarkPlan& plan = medium();
  auto items_of = [&](const SplitPlan& s) {
    std::set<std::int64_t> items;
    for (std::int64_t o : s.outfits)
      items.insert(plan.outfits[static_cast<std::size_t>(o)].items.begin(),
                   plan.outfits[static_cast<std::size_t>(o)].items.end());
    return items;
  };
  auto shared = [](const std::set<std::int64_t>& a, const std::set<std::int64_t>& b) {
    return std::count_if(a.begin(), a.end(), [&](std::int64_t i) { return b.count(i) > 0; });
  };
  const auto& nd = plan.nondisjoint;
  EXPECT_GE(nd[0].outfits.size(), 2000u);
  EXPECT_LE(nd[0].outfits.size(), 4000u);
  EXPECT_EQ(nd[0].outfits.size() + nd[1].outfits.size() + nd[2].outfits.size(),
            plan.outfits.size());
  EXPECT_GT(shared(items_of(nd[0]), items_of(nd[2])), 100);
  const auto& dj = plan.disjoint;
  const auto train = items_of(dj[0]);
  EXPECT_EQ(shared(train, items_of(dj[1])), 0);
  EXPECT_EQ(shared(train, items_of(dj[2])), 0);
  for (const SplitPlan& s : dj) {
    EXPECT_GT(s.outfits.size(), 100u);
    for (std::int64_t o : s.outfits)
      EXPECT_LE(plan.outfits[static_cast<std::size_t>(o)].items.size(), 16u);
  }
  std::printf("outfits: nondisjoint %zu / %zu / %zu, disjoint %zu / %zu / %zu; items %zu\n",
              nd[0].outfits.size(), nd[1].outfits.size(), nd[2].outfits.size(),
              dj[0].outfits.size(), dj[1].outfits.size(), dj[2].outfits.size(), plan.items.size());
}

TEST(OutfitBenchmarkPlan, CompatibilityNegativesSwapItemsForSameTypeOnes) {
  const OutfitBenchmarkPlan& plan = medium();
  for (const auto* variant : {&plan.nondisjoint, &plan.disjoint}) {
    for (const SplitPlan& split : *variant) {
      const std::size_t n = split.outfits.size();
      ASSERT_EQ(split.compatibility.size(), 2 * n);
      for (std::size_t k = 0; k < n; ++k) {
        const CompatibilityLine& pos = split.compatibility[k];
        const CompatibilityLine& neg = split.compatibility[n + k];
        ASSERT_TRUE(pos.compatible);
        ASSERT_FALSE(neg.compatible);
        ASSERT_EQ(pos.items.size(),
                  plan.outfits[static_cast<std::size_t>(split.outfits[k])].items.size());
        for (const OutfitSlot& s : pos.items)
          ASSERT_EQ(s.outfit, split.outfits[k]);
        ASSERT_EQ(neg.items.size(), pos.items.size());
        std::set<std::string> ids;
        for (std::size_t p = 0; p < pos.items.size(); ++p) {
          ASSERT_EQ(item_at(plan, neg.items[p]).type, item_at(plan, pos.items[p]).type);
          ASSERT_NE(neg.items[p].outfit, split.outfits[k]);
          ids.insert(item_at(plan, neg.items[p]).item_id);
        }
        ASSERT_EQ(ids.size(), neg.items.size());
      }
    }
  }
}

TEST(OutfitBenchmarkPlan, QuestionsHaveThreeSameTypeWrongAnswersFromOtherOutfits) {
  const OutfitBenchmarkPlan& plan = medium();
  std::array<int, 4> correct_at{};
  std::set<std::string> where;  // first, middle, last
  std::map<ItemType, int> test_blanks;
  for (int v = 0; v < 2; ++v) {
    const auto& variant = v == 0 ? plan.nondisjoint : plan.disjoint;
    for (std::size_t s = 0; s < 3; ++s) {
      const SplitPlan& split = variant[s];
      const std::set<std::int64_t> outfits(split.outfits.begin(), split.outfits.end());
      EXPECT_GE(split.blanks.size(), split.outfits.size() * 9 / 10);
      for (const BlankQuestion& q : split.blanks) {
        const std::int64_t own = q.question.front().outfit;
        for (const OutfitSlot& s : q.question)
          ASSERT_EQ(s.outfit, own);
        const OutfitSlot& right = q.answers[static_cast<std::size_t>(q.correct)];
        ASSERT_EQ(right.outfit, own);
        ASSERT_EQ(q.blank_position, right.position + 1);
        const std::size_t n = q.question.size() + 1;
        where.insert(q.blank_position == 1
                         ? "first"
                         : (static_cast<std::size_t>(q.blank_position) == n ? "last" : "middle"));
        std::set<std::int64_t> others;
        for (int a = 0; a < 4; ++a) {
          const OutfitSlot& c = q.answers[static_cast<std::size_t>(a)];
          ASSERT_TRUE(outfits.count(c.outfit));
          ASSERT_EQ(item_at(plan, c).type, item_at(plan, right).type);
          if (a != q.correct) {
            ASSERT_NE(c.outfit, own);
            others.insert(c.outfit);
          }
        }
        ASSERT_EQ(others.size(), 3u);
        ++correct_at[static_cast<std::size_t>(q.correct)];
        if (v == 0 && s == 2) ++test_blanks[item_at(plan, right).type];
      }
    }
  }
  EXPECT_EQ(where.size(), 3u);
  for (int c : correct_at)
    EXPECT_GT(c, 1000);
  std::printf("medium nondisjoint test questions: scarves %d, accessories %d\n",
              test_blanks[ItemType::Scarves], test_blanks[ItemType::Accessories]);
  EXPECT_GE(test_blanks[ItemType::Scarves], 100);
  EXPECT_GE(test_blanks[ItemType::Accessories], 100);
}

TEST(OutfitBenchmarkPlan, MarylandVariantHasAnyTypeNegativesAndTheAnswerFirst) {
  const OutfitBenchmarkPlan& plan = medium();
  const SplitPlan& test = plan.maryland[2];
  EXPECT_EQ(test.outfits, plan.nondisjoint[2].outfits);
  int other_type = 0;
  for (const BlankQuestion& q : test.blanks) {
    ASSERT_EQ(q.correct, 0);
    ASSERT_LE(q.question.size(), 7u);
    ASSERT_EQ(q.answers[0].outfit, q.question.front().outfit);
    for (int a = 1; a < 4; ++a) {
      ASSERT_NE(q.answers[static_cast<std::size_t>(a)].outfit, q.question.front().outfit);
      other_type += item_at(plan, q.answers[static_cast<std::size_t>(a)]).type !=
                    item_at(plan, q.answers[0]).type;
    }
  }
  EXPECT_GT(other_type, static_cast<int>(test.blanks.size()));
  const auto positives = std::count_if(test.compatibility.begin(), test.compatibility.end(),
                                       [](const CompatibilityLine& l) { return l.compatible; });
  EXPECT_EQ(static_cast<std::size_t>(positives), test.outfits.size());
  EXPECT_GT(test.compatibility.size() - static_cast<std::size_t>(positives), test.outfits.size());
  for (const CompatibilityLine& l : test.compatibility)
    ASSERT_LE(l.items.size(), 8u);
}

TEST(OutfitBenchmarkPlan, SanityFigures) {
  const OutfitBenchmarkPlan& plan = medium();
  const Distance hidden = [](const BenchmarkItem& a, const BenchmarkItem& b) {
    return hidden_dissimilarity(a, b);
  };
  // What one general embedding of the attributes can do at best: compare all three, whatever the
  // type pair.
  const Distance all_attributes = [](const BenchmarkItem& a, const BenchmarkItem& b) {
    return ((a.factors.color != b.factors.color) + (a.factors.background != b.factors.background) +
            (a.factors.rotation != b.factors.rotation)) /
           3.0;
  };
  const char* names[] = {"nondisjoint", "disjoint", "maryland"};
  for (int v = 0; v < 3; ++v) {
    const auto& variant = v == 0 ? plan.nondisjoint : (v == 1 ? plan.disjoint : plan.maryland);
    const SplitPlan& test = variant[2];
    // The mean over 10 random 16-d embeddings: items shared by many questions make one
    // embedding's figures vary more than independent questions would.
    Figures random;
    constexpr int kEmbeddings = 10;
    for (int e = 0; e < kEmbeddings; ++e) {
      const Figures one = score(plan, test, random_embedding(100 + static_cast<std::uint64_t>(e)));
      random.auc += one.auc / kEmbeddings;
      random.fitb += one.fitb / kEmbeddings;
    }
    const Figures truth = score(plan, test, hidden);
    const Figures blind = score(plan, test, all_attributes);
    const Figures text = score(plan, test, text_distance());
    std::printf(
        "%s test: %zu lines, %zu questions; random embedding AUC %.3f FITB %.1f%%; hidden "
        "process AUC %.3f FITB %.1f%%; all attributes whatever the types AUC %.3f FITB %.1f%%; "
        "text features AUC %.3f FITB %.1f%%\n",
        names[v], test.compatibility.size(), test.blanks.size(), random.auc, 100 * random.fitb,
        truth.auc, 100 * truth.fitb, blind.auc, 100 * blind.fitb, text.auc, 100 * text.fitb);
    // The text features tell part of the style (the attribute words of the titles).
    EXPECT_GT(text.auc, 0.6) << names[v];
    EXPECT_GT(text.fitb, 0.3) << names[v];
    EXPECT_NEAR(random.auc, 0.5, 0.02) << names[v];
    EXPECT_NEAR(random.fitb, 0.25, 0.02) << names[v];
    EXPECT_GE(truth.auc, 0.95) << names[v];
    EXPECT_GE(truth.fitb, 0.6) << names[v];
    // Conditions matter: ignoring which attributes a type pair shares costs accuracy.
    EXPECT_LT(blind.auc, truth.auc) << names[v];
    EXPECT_LT(blind.fitb, truth.fitb - 0.08) << names[v];
  }
}

TEST(OutfitBenchmarkPlan, HiddenProcessComparesOnlyTheAttributesATypePairShares) {
  BenchmarkItem top, bottom, shoe;
  top.type = ItemType::Tops;        // colour, cut
  bottom.type = ItemType::Bottoms;  // colour, texture
  shoe.type = ItemType::Shoes;      // texture, cut
  top.factors.color = bottom.factors.color = 2;
  top.factors.background = 1, bottom.factors.background = 4, shoe.factors.background = 4;
  top.factors.rotation = 3, bottom.factors.rotation = 0, shoe.factors.rotation = 1;
  EXPECT_EQ(hidden_dissimilarity(top, bottom), 0.0);   // colour agrees
  EXPECT_EQ(hidden_dissimilarity(bottom, shoe), 0.0);  // texture agrees
  EXPECT_EQ(hidden_dissimilarity(top, shoe), 1.0);     // cut differs
  BenchmarkItem top2 = top;
  top2.factors.rotation = 0;
  EXPECT_EQ(hidden_dissimilarity(top, top2), 0.5);  // colour agrees, cut differs
  EXPECT_NEAR(hidden_outfit_score({&top, &bottom, &shoe}), 1.0 / 3, 1e-12);
}

TEST(OutfitBenchmarkFiles, WritesTheReleasedFormatsAndEveryIdentifierResolves) {
  const fs::path& root = tiny_root();
  const OutfitBenchmarkPlan plan = plan_outfit_benchmark(kTiny, labels());

  const json metadata = read_json(root / "polyvore_item_metadata.json");
  ASSERT_EQ(metadata.size(), plan.items.size());
  std::set<std::string> type_names;
  for (const auto& [id, item] : metadata.items()) {
    for (const char* key : {"semantic_category", "title", "url_name", "category_id", "description"})
      ASSERT_TRUE(item.at(key).is_string()) << id << " " << key;
    ASSERT_TRUE(item.at("catgeories").is_array());
    ASSERT_TRUE(item.at("related").is_array());
    type_names.insert(item.at("semantic_category").get<std::string>());
    const DecodedImage image = read_image_file(root / "images" / (id + ".jpg"), 1 << 20);
    ASSERT_TRUE(image.problem.empty()) << image.problem;
    ASSERT_EQ(image.image.width, 32);
  }
  EXPECT_EQ(type_names.size(), static_cast<std::size_t>(kNumItemTypes));

  for (int v = 0; v < 2; ++v) {
    const fs::path variant = root / (v == 0 ? "nondisjoint" : "disjoint");
    const auto& splits = v == 0 ? plan.nondisjoint : plan.disjoint;
    for (std::size_t s = 0; s < 3; ++s) {
      const std::string name = kBenchmarkSplitNames[s];
      const json outfits = read_json(variant / (name + ".json"));
      ASSERT_EQ(outfits.size(), splits[s].outfits.size());
      std::map<std::string, std::string> item_of;  // <set_id>_<index> → item_id
      for (const json& o : outfits) {
        int previous = 0;
        for (const json& i : o.at("items")) {
          const int index = i.at("index").get<int>();
          ASSERT_GT(index, previous);
          previous = index;
          const std::string id = i.at("item_id").get<std::string>();
          ASSERT_TRUE(metadata.contains(id));
          item_of[o.at("set_id").get<std::string>() + "_" + std::to_string(index)] = id;
        }
      }
      auto type_of = [&](const std::string& identifier) {
        EXPECT_TRUE(item_of.count(identifier)) << identifier;
        return metadata.at(item_of[identifier]).at("semantic_category").get<std::string>();
      };
      std::ifstream lines(variant / ("compatibility_" + name + ".txt"));
      std::string line;
      std::vector<std::vector<std::string>> parsed;
      while (std::getline(lines, line)) {
        std::istringstream words(line);
        std::vector<std::string> w((std::istream_iterator<std::string>(words)),
                                   std::istream_iterator<std::string>());
        parsed.push_back(w);
      }
      ASSERT_EQ(parsed.size(), 2 * outfits.size());
      for (std::size_t k = 0; k < parsed.size(); ++k) {
        const bool positive = k < outfits.size();
        ASSERT_EQ(parsed[k][0], positive ? "1" : "0");
        const auto& outfit = outfits[positive ? k : k - outfits.size()];
        ASSERT_EQ(parsed[k].size(), outfit.at("items").size() + 1);
        for (std::size_t p = 1; p < parsed[k].size(); ++p) {
          const json& item = outfit.at("items")[p - 1];
          const std::string own = outfit.at("set_id").get<std::string>() + "_" +
                                  std::to_string(item.at("index").get<int>());
          if (positive) {
            ASSERT_EQ(parsed[k][p], own);
          }
          ASSERT_EQ(type_of(parsed[k][p]), type_of(own));
        }
      }
      const json questions = read_json(variant / ("fill_in_blank_" + name + ".json"));
      ASSERT_EQ(questions.size(), splits[s].blanks.size());
      for (const json& q : questions) {
        const std::string set = q.at("question")[0].get<std::string>().substr(0, 9);
        ASSERT_EQ(q.at("answers").size(), 4u);
        int right = 0;
        std::string blank_type;
        for (const json& a : q.at("answers"))
          if (a.get<std::string>().substr(0, 9) == set) ++right, blank_type = type_of(a);
        ASSERT_EQ(right, 1);
        for (const json& a : q.at("answers"))
          ASSERT_EQ(type_of(a), blank_type);
        for (const json& i : q.at("question"))
          type_of(i);
        ASSERT_GE(q.at("blank_position").get<int>(), 1);
        ASSERT_LE(q.at("blank_position").get<std::size_t>(), q.at("question").size() + 1);
      }
    }
  }

  const fs::path maryland = root / "maryland";
  std::set<std::string> names;
  for (const char* split : {"train", "valid", "test"}) {
    for (const json& o : read_json(maryland / (std::string(split) + "_no_dup.json"))) {
      for (const char* key :
           {"name", "views", "items", "image", "likes", "date", "set_url", "set_id", "desc"})
        ASSERT_TRUE(o.contains(key)) << key;
      ASSERT_LE(o.at("items").size(), 8u);
      for (const json& i : o.at("items")) {
        for (const char* key : {"index", "name", "price", "likes", "image", "categoryid"})
          ASSERT_TRUE(i.contains(key)) << key;
        const std::string set_id = o.at("set_id").get<std::string>();
        const std::string index = std::to_string(i.at("index").get<int>());
        ASSERT_TRUE(fs::is_regular_file(maryland / "images" / set_id / (index + ".jpg")));
        if (std::string(split) == "test") names.insert(set_id + "_" + index);
      }
    }
  }
  const json fitb = read_json(maryland / "fill_in_the_blank_test.json");
  ASSERT_FALSE(fitb.empty());
  for (const json& q : fitb) {
    const std::string set = q.at("question")[0].get<std::string>().substr(0, 9);
    ASSERT_EQ(q.at("answers")[0].get<std::string>().substr(0, 9), set);
    for (const json& a : q.at("answers"))
      ASSERT_TRUE(names.count(a.get<std::string>()));
  }
  std::ifstream compat(maryland / "fashion-compatibility-prediction.txt");
  std::string word;
  int words = 0;
  while (compat >> word) {
    if (word == "0" || word == "1") continue;
    ASSERT_TRUE(names.count(word)) << word;
    ++words;
  }
  EXPECT_GT(words, 0);
  const std::string types = read(maryland / "category_types.csv");
  EXPECT_EQ(types.substr(0, 16), "categoryid,type\n");
  EXPECT_NE(types.find("\n27,scarves\n"), std::string::npos);
}

namespace {

// train_hglmm_pca6000.txt in the released layout: a key (which may hold commas), then 6000 numbers.
std::map<std::string, std::vector<double>> read_text_features(const fs::path& file) {
  std::map<std::string, std::vector<double>> out;
  std::ifstream in(file, std::ios::binary);
  std::string line;
  std::size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::vector<double> values(kTextFeatureSize);
    std::size_t end = line.size();
    for (int k = kTextFeatureSize - 1; k >= 0; --k) {
      const std::size_t comma = line.rfind(',', end - 1);
      EXPECT_NE(comma, std::string::npos) << file << ":" << number;
      if (comma == std::string::npos) return out;
      const std::string text = line.substr(comma + 1, end - comma - 1);
      char* stop = nullptr;
      values[static_cast<std::size_t>(k)] = std::strtod(text.c_str(), &stop);
      EXPECT_TRUE(!text.empty() && *stop == '\0') << file << ":" << number << ": '" << text << "'";
      end = comma;
    }
    const std::string key = line.substr(0, end);
    EXPECT_FALSE(key.empty()) << file << ":" << number;
    EXPECT_TRUE(out.emplace(key, values).second) << file << ":" << number << " repeats " << key;
  }
  return out;
}

}  // namespace

TEST(OutfitBenchmarkFiles, TrainTextFeaturesHoldEveryTrainKeyAndNoOther) {
  const fs::path& root = tiny_root();
  const json metadata = read_json(root / "polyvore_item_metadata.json");
  const auto key_of = [&](const std::string& id) {
    const json& m = metadata.at(id);
    return polyvore_text_key(m.at("title").get<std::string>(), m.at("url_name").get<std::string>());
  };
  std::map<std::string, std::vector<double>> nondisjoint;
  for (const char* variant : {"nondisjoint", "disjoint"}) {
    const fs::path folder = root / variant;
    const auto start = std::chrono::steady_clock::now();
    const auto features = read_text_features(folder / kTextFeatureFile);
    std::printf("%s/%s: %zu keys, %.1f MB, parsed in %.2f s\n", variant, kTextFeatureFile,
                features.size(),
                static_cast<double>(fs::file_size(folder / kTextFeatureFile)) / 1e6,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    std::set<std::string> train_keys, unseen;
    int fallback = 0, without_text = 0;
    for (const json& o : read_json(folder / "train.json"))
      for (const json& i : o.at("items")) {
        const std::string id = i.at("item_id").get<std::string>();
        const std::string key = key_of(id);
        if (key.empty()) {
          ++without_text;
          continue;
        }
        train_keys.insert(key);
        fallback += metadata.at(id).at("title").get<std::string>().empty();
      }
    for (const char* split : {"valid", "test"})
      for (const json& o : read_json(folder / (std::string(split) + ".json")))
        for (const json& i : o.at("items")) {
          const std::string key = key_of(i.at("item_id").get<std::string>());
          if (!key.empty() && !train_keys.count(key)) unseen.insert(key);
        }
    std::set<std::string> keys;
    for (const auto& [key, values] : features) {
      keys.insert(key);
      const std::vector<double> want = text_feature(key);
      for (int k = 0; k < kTextFeatureSize; ++k) {
        const auto at = static_cast<std::size_t>(k);
        ASSERT_NEAR(values[at], want[at], 5e-4 * std::abs(want[at]) + 1e-12) << key << " " << k;
      }
    }
    EXPECT_EQ(keys, train_keys) << variant;
    EXPECT_GT(fallback, 0) << variant;         // keys from a url_name
    EXPECT_GT(without_text, 0) << variant;     // items without text
    EXPECT_GT(unseen.size(), 10u) << variant;  // valid and test items without a feature
    EXPECT_TRUE(std::any_of(keys.begin(), keys.end(), [](const std::string& k) {
      return k.find(',') != std::string::npos;
    })) << variant;
    if (std::string(variant) == "nondisjoint") nondisjoint = features;
  }
  // Maryland's training items are nondisjoint's, named by their titles: all have features.
  EXPECT_EQ(read(root / "maryland" / kTextFeatureFile),
            read(root / "nondisjoint" / kTextFeatureFile));
  int named = 0;
  for (const json& o : read_json(root / "maryland" / "train_no_dup.json"))
    for (const json& i : o.at("items")) {
      const std::string key = normalised_text(i.at("name").get<std::string>());
      if (key.empty()) continue;
      ++named;
      EXPECT_TRUE(nondisjoint.count(key)) << key;
    }
  EXPECT_GT(named, 0);
}

TEST(OutfitBenchmarkFiles, TypespacesIsAPythonPickleOfAllSixtySixTypePairs) {
  std::string expected = "[";
  for (int i = 0; i < kNumItemTypes; ++i)
    for (int j = i; j < kNumItemTypes; ++j)
      expected += std::string(expected.size() > 1 ? ", " : "") + "('" +
                  item_type_name(static_cast<ItemType>(i)) + "', '" +
                  item_type_name(static_cast<ItemType>(j)) + "')";
  expected += "]\n";
  for (const char* variant : {"nondisjoint", "disjoint"}) {
    const std::string command =
        std::string(WSCSL_PYTHON) +
        " -c 'import pickle, sys; p = pickle.load(open(sys.argv[1], \"rb\")); "
        "print(len(p)); print(p)' " +
        (tiny_root() / variant / "typespaces.p").string();
    FILE* pipe = ::popen(command.c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    std::string out;
    char buffer[4096];
    while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe))
      out.append(buffer, n);
    ASSERT_EQ(::pclose(pipe), 0) << out;
    EXPECT_EQ(out, "66\n" + expected);
  }
}

TEST(OutfitBenchmarkFiles, TheSameSeedGivesTheSameBytes) {
  TempDir dir("determinism");
  ensure_outfit_benchmark(dir.path() / "b", kTiny);
  OutfitBenchmarkOptions other = kTiny;
  other.seed = 8;
  ensure_outfit_benchmark(dir.path() / "c", other);
  const auto a = tree(tiny_root());
  EXPECT_GT(a.size(), 1000u);
  EXPECT_TRUE(a == tree(dir.path() / "b"));
  const auto c = tree(dir.path() / "c");
  EXPECT_NE(a.at("nondisjoint/compatibility_test.txt"), c.at("nondisjoint/compatibility_test.txt"));
  EXPECT_NE(a.at("polyvore_item_metadata.json"), c.at("polyvore_item_metadata.json"));
}

TEST(OutfitBenchmarkFiles, ASecondCallDoesNothingAndOtherOptionsReplaceTheBenchmark) {
  TempDir dir("stamp");
  const fs::path root = dir.path() / "b";
  ensure_outfit_benchmark(root, kTiny);
  const auto written = fs::last_write_time(root / "nondisjoint" / "test.json");
  std::ofstream(root / "note.txt") << "left by a user";
  const auto start = std::chrono::steady_clock::now();
  ensure_outfit_benchmark(root, kTiny);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 0.2);
  EXPECT_EQ(fs::last_write_time(root / "nondisjoint" / "test.json"), written);
  EXPECT_TRUE(fs::exists(root / "note.txt"));

  OutfitBenchmarkOptions other = kTiny;
  other.seed = 8;
  const std::string before = read(root / "nondisjoint" / "compatibility_test.txt");
  ensure_outfit_benchmark(root, other);
  EXPECT_NE(read(root / "nondisjoint" / "compatibility_test.txt"), before);
  EXPECT_NE(read(root / "wscsl_outfit_benchmark.stamp").find("seed 8"), std::string::npos);
  for (const auto& e : fs::directory_iterator(dir.path()))
    EXPECT_TRUE(e.path().filename() == "b" || e.path().filename() == ".b.lock") << e.path();
}

TEST(OutfitBenchmarkFiles, APartialFolderOfAnInterruptedRunIsReplacedNotRead) {
  TempDir dir("partial");
  const fs::path root = dir.path() / "b";
  // What a run killed while writing leaves: its staging folder with the marker, half written.
  const fs::path partial = dir.path() / ".b.partial";
  fs::create_directories(partial / "nondisjoint");
  std::ofstream(partial / "wscsl_outfit_benchmark.partial") << "";
  std::ofstream(partial / "nondisjoint" / "test.json") << "[{\"set_id\": \"tru";
  ensure_outfit_benchmark(root, kTiny);
  EXPECT_FALSE(fs::exists(partial));
  EXPECT_NO_THROW(read_json(root / "nondisjoint" / "test.json"));
  EXPECT_FALSE(fs::exists(root / "wscsl_outfit_benchmark.partial"));

  // A complete benchmark whose stamp is missing is not trusted either: it is someone else's.
  fs::remove(root / "wscsl_outfit_benchmark.stamp");
  try {
    ensure_outfit_benchmark(root, kTiny);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(root.string() + ": exists and is not an outfit benchmark"),
              std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(fs::exists(root / "nondisjoint" / "test.json"));
}

TEST(OutfitBenchmarkFiles, NeverDeletesDataItDidNotWrite) {
  TempDir dir("foreign");
  const fs::path root = dir.path() / "mine";
  fs::create_directories(root);
  std::ofstream(root / "thesis.tex") << "precious";
  EXPECT_THROW(ensure_outfit_benchmark(root, kTiny), Error);
  EXPECT_EQ(read(root / "thesis.tex"), "precious");
  // A folder in the way of the staging folder that is not ours is refused too.
  const fs::path other = dir.path() / "other";
  fs::create_directories(dir.path() / ".other.partial");
  std::ofstream(dir.path() / ".other.partial" / "keep.txt") << "keep";
  EXPECT_THROW(ensure_outfit_benchmark(other, kTiny), Error);
  EXPECT_EQ(read(dir.path() / ".other.partial" / "keep.txt"), "keep");
  // An empty folder is fine.
  const fs::path empty = dir.path() / "empty";
  fs::create_directories(empty);
  ensure_outfit_benchmark(empty, kTiny);
  EXPECT_TRUE(fs::exists(empty / "wscsl_outfit_benchmark.stamp"));
}

TEST(OutfitBenchmarkFiles, ErrorsNameTheFile) {
  TempDir dir("errors");
  OutfitBenchmarkOptions missing = kTiny;
  missing.fashion_mnist_root = "/nonexistent";
  try {
    ensure_outfit_benchmark(dir.path() / "b", missing);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("/nonexistent/train-images-idx3-ubyte.gz: ", 0), 0u)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(dir.path() / "b"));
  EXPECT_FALSE(fs::exists(dir.path() / ".b.partial"));
  try {
    plan_outfit_benchmark(kTiny, std::vector<std::uint8_t>(100, 3));
    FAIL() << "expected an error";
  } catch (const DataError& e) {
    EXPECT_EQ(std::string(e.what()),
              kFashionMnist.string() +
                  "/train-labels-idx1-ubyte.gz: no image of class 0, which the outfit benchmark "
                  "renders");
  }
}

TEST(OutfitBenchmarkFiles, ConcurrentCallsWriteOneCompleteBenchmark) {
  TempDir dir("concurrent");
  const fs::path root = dir.path() / "b";
  std::vector<std::string> errors(3);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < errors.size(); ++t)
    threads.emplace_back([&, t] {
      try {
        ensure_outfit_benchmark(root, kTiny);
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  for (auto& t : threads)
    t.join();
  for (const std::string& e : errors)
    EXPECT_EQ(e, "");
  EXPECT_TRUE(tree(root) == tree(tiny_root()));
  EXPECT_FALSE(fs::exists(dir.path() / ".b.partial"));
}
