// The image datasets end to end: fixtures in each real layout train two steps, and
// `wscsl make-triplets` / `wscsl export` output reads back through ut_zappos and image_folder.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "built_pipeline.hpp"
#include "cli/triplet_files.hpp"
#include "evaluation/split_check.hpp"
#include "pipelines.hpp"
#include "train/trainer.hpp"
#include "wscsl/data/csn_layout.hpp"
#include "wscsl/testing/image_fixtures.hpp"
#include "wscsl/util/text.hpp"

namespace fs = std::filesystem;
using namespace wscsl;
using namespace wscsl::host;

namespace {

class DatasetsTest : public ::testing::Test {
 protected:
  static Pipeline pipeline(const std::string& dataset_table) {
    const std::string text = dataset_table + test::tiny_model() + R"(
[[evaluators]]
type = "triplet_accuracy"

[trainer]
epochs = 1
batch_size = 4
threads = 1
log_every = 1000
)";
    return test::built_pipeline(text);
  }

  // Trains two steps and checks they ran and the model is still finite.
  void train_two_steps(const std::string& dataset_table) {
    Pipeline p = pipeline(dataset_table);
    const RunDirectory run = RunDirectory::create(dir_ / "run");
    TrainRequest request;
    request.stop_after_steps = 2;
    request.out = std::fopen("/dev/null", "w");
    const TrainResult result = train(p, run, request);
    std::fclose(request.out);
    EXPECT_EQ(result.outcome, TrainOutcome::Stopped);
    EXPECT_EQ(result.state.global_step, 2);
    for (const auto& parameter : p.model()->parameters())
      EXPECT_TRUE(parameter.isfinite().all().item<bool>());
  }

  std::string image_folder_table(const std::string& extra = "") const {
    return fmt::format(
        "[dataset]\ntype = \"image_folder\"\nroot = \"{}\"\nattributes = \"{}\"\nimage_size = 16\n"
        "decode_threads = 1\ntrain_triplets = 12\nval_triplets = 6\ntest_triplets = 6\n{}\n",
        (dir_ / "folder" / "images").string(), (dir_ / "folder" / "attributes.csv").string(),
        extra);
  }

  // The message of the ConfigError check_splits throws for the pipeline, "" when it passes.
  static std::string split_check_error(const std::string& dataset_table,
                                       const std::string& evaluators) {
    Pipeline p = test::built_pipeline(dataset_table + test::tiny_model() + evaluators +
                                      "\n[trainer]\nepochs = 1\nbatch_size = 4\nthreads = 1\n");
    try {
      check_splits(p);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "";
  }

  wscsl::testing::ScratchDir scratch_{"datasets"};
  const fs::path dir_ = scratch_.path();
};

// Every evaluator an image dataset with factor labels feeds.
constexpr const char* kLabelledEvaluators = R"(
[[evaluators]]
type = "triplet_accuracy"

[[evaluators]]
type = "reversed_triplets"

[[evaluators]]
type = "alignment"

[[evaluators]]
type = "retrieval"
queries = "all"
k = [1]

[[evaluators]]
type = "retrieval_grid"
queries = 1
k = 1

[[evaluators]]
type = "embedding_plot"
projection = "pca"
)";

// retrieval_grid with more queries than a split of a small dataset has images.
constexpr const char* kGridBeyondTheSplit = R"(
[[evaluators]]
type = "alignment"

[[evaluators]]
type = "retrieval_grid"
queries = 500
k = 1
)";

using Row = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>;

std::multiset<Row> rows(const SplitData& s) {
  std::multiset<Row> out;
  for (std::int64_t i = 0; i < s.triplets.size(0); ++i)
    out.emplace(s.triplets[i][0].item<std::int64_t>(), s.triplets[i][1].item<std::int64_t>(),
                s.triplets[i][2].item<std::int64_t>(), s.conditions[i].item<std::int64_t>());
  return out;
}

// The triplets of a CSN layout, as (anchor, close, far, condition).
std::multiset<Row> csn_rows(const fs::path& dir, const std::vector<std::string>& conditions,
                            Split split) {
  std::multiset<Row> out;
  for (std::size_t k = 0; k < conditions.size(); ++k)
    for (const std::string& line :
         read_lines(csn_triplet_file(dir, conditions[k], split_name(split), false))) {
      const auto t = tokens(line);
      out.emplace(*parse_id(t[0]), *parse_id(t[2]), *parse_id(t[1]), static_cast<std::int64_t>(k));
    }
  return out;
}

}  // namespace

TEST_F(DatasetsTest, UtZapposTrainsTwoSteps) {
  wscsl::testing::write_ut_zappos(dir_ / "zappos");
  train_two_steps(fmt::format(
      "[dataset]\ntype = \"ut_zappos\"\nroot = \"{}\"\nimage_size = 16\ndecode_threads = 1\n"
      "half_reverse = true\n",
      (dir_ / "zappos").string()));
}

TEST_F(DatasetsTest, ImageFolderTrainsTwoSteps) {
  wscsl::testing::write_image_folder(dir_ / "folder");
  train_two_steps(image_folder_table("numeric = [\"size\"]\nclose_within = 1\nfar_beyond = 1"));
}

TEST_F(DatasetsTest, CelebaTrainsTwoSteps) {
  wscsl::testing::write_celeba(dir_ / "celeba");
  for (const char* variant : {"attributes", "merged"}) {
    SCOPED_TRACE(variant);
    fs::remove_all(dir_ / "run");
    train_two_steps(fmt::format(
        "[dataset]\ntype = \"celeba\"\nroot = \"{}\"\nimage_size = 16\ndecode_threads = 1\n"
        "variant = \"{}\"\ntrain_triplets = 16\nval_triplets = 8\ntest_triplets = 8\n",
        (dir_ / "celeba").string(), variant));
  }
}

TEST_F(DatasetsTest, MadeTripletsRoundTripThroughUtZapposAndImageFolder) {
  wscsl::testing::write_image_folder(dir_ / "folder");
  Pipeline source = pipeline(image_folder_table("numeric = [\"size\"]"));
  MakeTripletsOptions options;
  options.out = dir_ / "made";
  options.train = 7;
  options.val = 3;
  options.test = 4;
  options.seed = 5;
  options.close_within = 1;
  options.far_beyond = 2;
  options.half_reverse = true;
  make_triplets(*source.dataset, options, nullptr);
  const std::vector<std::string> conditions = {"color", "size"};
  EXPECT_EQ(read_lines(dir_ / "made" / "filenames.json").size(), 24u);

  Pipeline zappos = pipeline(
      fmt::format("[dataset]\ntype = \"ut_zappos\"\nroot = \"{}\"\nimages = \"{}\"\n"
                  "conditions = [\"color\", \"size\"]\nimage_size = 16\ndecode_threads = 1\n"
                  "train_triplets = 0\nval_triplets = 0\ntest_triplets = 0\n",
                  (dir_ / "made").string(), (dir_ / "folder" / "images").string()));
  Pipeline folder = pipeline(image_folder_table(
      fmt::format("numeric = [\"size\"]\ntriplets = \"{}\"", (dir_ / "made").string())));
  for (Split split : kAllSplits) {
    SCOPED_TRACE(split_name(split));
    const std::multiset<Row> written = csn_rows(dir_ / "made", conditions, split);
    EXPECT_EQ(written.size(), split == Split::Train ? 14u : (split == Split::Val ? 6u : 8u));
    EXPECT_EQ(rows(zappos.dataset->split(split)), written);
    EXPECT_EQ(rows(folder.dataset->split(split)), written);
  }
  // Every drawn triplet keeps to the rule and to its split.
  const auto a = source.dataset->attributes(Split::Train);
  const std::set<std::int64_t> members(a->members.data_ptr<std::int64_t>(),
                                       a->members.data_ptr<std::int64_t>() + a->members.numel());
  for (const auto& [anchor, close, far, k] : csn_rows(dir_ / "made", conditions, Split::Train)) {
    EXPECT_TRUE(members.count(anchor) && members.count(close) && members.count(far));
    const double va = a->values[anchor][k].item<double>(), vc = a->values[close][k].item<double>(),
                 vf = a->values[far][k].item<double>();
    if (k == 0) {
      EXPECT_EQ(va, vc);
      EXPECT_NE(va, vf);
    } else {
      EXPECT_LE(std::abs(va - vc), 1.0);
      EXPECT_GT(std::abs(va - vf), 2.0);
    }
  }
  // The half-reverse lists hold the same triplets, some of them reversed.
  Pipeline half = pipeline(
      fmt::format("[dataset]\ntype = \"ut_zappos\"\nroot = \"{}\"\nimages = \"{}\"\n"
                  "conditions = [\"color\", \"size\"]\nimage_size = 16\nhalf_reverse = true\n"
                  "train_triplets = 0\n",
                  (dir_ / "made").string(), (dir_ / "folder" / "images").string()));
  const SplitData& h = half.dataset->split(Split::Train);
  EXPECT_EQ(rows(h), csn_rows(dir_ / "made", conditions, Split::Train));
  EXPECT_GT(h.reversed.sum().item<std::int64_t>(), 0);
  EXPECT_LT(h.reversed.sum().item<std::int64_t>(), 14);
}

TEST_F(DatasetsTest, MakeTripletsNeedsAttributes) {
  wscsl::testing::write_ut_zappos(dir_ / "zappos");
  Pipeline p = pipeline(
      fmt::format("[dataset]\ntype = \"ut_zappos\"\nroot = \"{}\"\n", (dir_ / "zappos").string()));
  MakeTripletsOptions options;
  options.out = dir_ / "made";
  try {
    make_triplets(*p.dataset, options, nullptr);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("has no per-image attributes"), std::string::npos);
  }
}

TEST_F(DatasetsTest, ExportedFashionCrbReadsBackWithIdenticalTriplets) {
  Pipeline crb = pipeline(R"([dataset]
type = "fashion_crb"
train_items = 40
val_items = 20
test_items = 20
train_triplets = 24
val_triplets = 12
test_triplets = 12
)");
  export_dataset(*crb.dataset, dir_ / "export", nullptr);
  Pipeline folder = pipeline(fmt::format(
      "[dataset]\ntype = \"image_folder\"\nroot = \"{0}/images\"\nattributes = "
      "\"{0}/attributes.csv\"\ntriplets = \"{0}\"\nconditions = [\"category\", \"color\", "
      "\"rotation\", \"background\"]\nimage_size = 32\nnormalize = \"none\"\nflip = false\n",
      (dir_ / "export").string()));
  std::int64_t offset = 0;
  for (Split split : kAllSplits) {
    SCOPED_TRACE(split_name(split));
    const SplitData& original = crb.dataset->split(split);
    std::multiset<Row> shifted;
    for (const auto& [a, c, f, k] : rows(original))
      shifted.emplace(a + offset, c + offset, f + offset, k);
    const SplitData& read = folder.dataset->split(split);
    EXPECT_EQ(rows(read), shifted);
    // Lossless PNG: the images are the benchmark's pixels.
    const at::Tensor ids = torch::arange(3, torch::kLong);
    EXPECT_TRUE(torch::allclose(folder.dataset->images(split, ids + offset, {}),
                                crb.dataset->images(split, ids, {}), 0, 1e-6));
    offset += original.num_images;
  }
}

// Each evaluator declares what a split must hold for its metric, and check_splits (`wscsl check`,
// and `train` before its first step) holds every dataset's splits to it, naming the files they
// were read from. The outfit datasets' own are in test_outfit_releases.cpp.
TEST_F(DatasetsTest, EveryEvaluatorIsHeldToWhatTheSplitsOfEveryDatasetHold) {
  wscsl::testing::write_image_folder(dir_ / "folder");
  wscsl::testing::write_celeba(dir_ / "celeba");
  const fs::path csv = dir_ / "folder" / "attributes.csv";
  const fs::path celeba = dir_ / "celeba";
  const auto folder = [&](std::int64_t test_triplets) {
    return fmt::format(
        "[dataset]\ntype = \"image_folder\"\nroot = \"{}\"\nattributes = \"{}\"\n"
        "image_size = 16\ndecode_threads = 1\ntrain_triplets = 12\nval_triplets = 6\n"
        "test_triplets = {}\n",
        (dir_ / "folder" / "images").string(), csv.string(), test_triplets);
  };
  const auto celeba_table = [&](std::int64_t test_triplets) {
    return fmt::format(
        "[dataset]\ntype = \"celeba\"\nroot = \"{}\"\nimage_size = 16\ndecode_threads = 1\n"
        "variant = \"merged\"\ntrain_triplets = 16\nval_triplets = 10\ntest_triplets = {}\n",
        celeba.string(), test_triplets);
  };
  const auto crb = [](std::int64_t test_triplets) {
    return fmt::format(
        "[dataset]\ntype = \"fashion_crb\"\ntrain_items = 64\nval_items = 48\n"
        "test_items = 48\ntrain_triplets = 16\nval_triplets = 16\ntest_triplets = {}\n",
        test_triplets);
  };
  struct Case {
    std::string name;
    std::function<std::string(std::int64_t)> table;
    std::string files;  // what the messages say the triplets came from
  };
  const std::vector<Case> cases = {
      {"image_folder", folder, "read from " + csv.string()},
      {"celeba", celeba_table,
       fmt::format("read from {}, {}", (celeba / "list_eval_partition.txt").string(),
                   (celeba / "list_attr_celeba.txt").string())},
      {"fashion_crb", crb, "generated by the dataset"}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(split_check_error(c.table(6), kLabelledEvaluators), "");
    // One test triplet leaves conditions without any: the alignment cannot be measured.
    const std::string one = split_check_error(c.table(1), kLabelledEvaluators);
    EXPECT_NE(one.find("evaluator 'alignment' needs triplets of every condition in the test "
                       "split, and it has none of condition"),
              std::string::npos)
        << one;
    EXPECT_NE(one.find("(" + c.files + ")"), std::string::npos) << one;
    const std::string grid = split_check_error(c.table(6), kGridBeyondTheSplit);
    EXPECT_NE(grid.find("evaluator 'retrieval_grid': queries = 500 and k = 1 need at least 501 "
                        "images in the test split, which has "),
              std::string::npos)
        << grid;
    EXPECT_NE(grid.find("triplets reference, " + c.files + ")"), std::string::npos) << grid;
  }

  // UT-Zappos's test lists emptied: every triplet evaluator is refused, naming the lists.
  wscsl::testing::write_ut_zappos(dir_ / "zappos");
  const std::string zappos = fmt::format(
      "[dataset]\ntype = \"ut_zappos\"\nroot = \"{}\"\nimage_size = 16\ndecode_threads = 1\n",
      (dir_ / "zappos").string());
  const std::string triplet_evaluators =
      "[[evaluators]]\ntype = \"triplet_accuracy\"\n[[evaluators]]\ntype = "
      "\"reversed_triplets\"\n[[evaluators]]\ntype = \"alignment\"\n";
  EXPECT_EQ(split_check_error(zappos, triplet_evaluators), "");
  std::vector<std::string> lists;
  for (const char* condition : {"class", "closure", "gender", "heel"}) {
    const fs::path list = csn_triplet_file(dir_ / "zappos", condition, "test", false);
    wscsl::testing::write_text(list, "");
    lists.push_back(list.string());
  }
  const std::string empty = split_check_error(zappos, triplet_evaluators);
  const std::string read_from = "(read from " + join(lists, ", ") + ")";
  for (const char* evaluator : {"triplet_accuracy", "reversed_triplets"})
    EXPECT_NE(empty.find(fmt::format("evaluator '{}' needs triplets in the test split, and it has "
                                     "none {}",
                                     evaluator, read_from)),
              std::string::npos)
        << empty;
  EXPECT_NE(empty.find("evaluator 'alignment' needs triplets of every condition in the test split, "
                       "and it has none of conditions 'class', 'closure', 'gender', 'heel' " +
                       read_from),
            std::string::npos)
      << empty;
}
