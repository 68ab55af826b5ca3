// `wscsl index` and `wscsl search` on tiny trained runs of each kind of condition module — weak
// (DiscoverNet), supervised (CSN masks), pair-dependent (SCE-Net's pair branch) and attending
// (ASEN, whose attention maps the explorer's answers carry) — through the executable, and the
// search library against an exhaustive ranking by the module; and every kind of bad input, each
// refused with a sentence naming the file, nothing written.
#include <gtest/gtest.h>

#include <zlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ports.hpp"
#include "run_command.hpp"
#include "search/explore_source.hpp"
#include "search/index_format.hpp"
#include "search/l2_distance.hpp"
#include "search/searcher.hpp"
#include "wscsl/data/image_file.hpp"
#include "wscsl/plot/canvas.hpp"
#include "wscsl/testing/image_fixtures.hpp"

namespace {

namespace fs = std::filesystem;
using wscsl::test::Output;
using wscsl::test::run_wscsl;
namespace search = wscsl::host::search;

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_bytes(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A small image-folder pipeline (24 images, colour and size) with `module` as its condition
// module, trained for one epoch of two steps into dir/<name>.
std::string train(const fs::path& dir, const std::string& name, const std::string& module,
                  int seed = 1) {
  const fs::path pipeline = dir / (name + ".toml");
  std::ofstream(pipeline) << "[dataset]\ntype = \"image_folder\"\nroot = \"folder/images\"\n"
                             "attributes = \"folder/attributes.csv\"\nimage_size = 8\n"
                             "cache_dir = \"cache\"\n"
                             "train_triplets = 8\nval_triplets = 8\ntest_triplets = 4\n"
                             "[backbone]\ntype = \"convnet\"\nwidth = 4\ndepth = 1\n"
                             "embedding_dim = 6\n"
                             "[condition_module]\n"
                          << module
                          << "[[losses]]\ntype = \"margin\"\n"
                             "[[evaluators]]\ntype = \"alignment\"\n"
                             "[trainer]\nepochs = 1\nbatch_size = 4\nthreads = 1\nseed = "
                          << seed << "\ndevice = \"cpu\"\n";
  const std::string run = (dir / name).string();
  const Output trained = run_wscsl("train " + pipeline.string() + " --run-dir " + run);
  EXPECT_EQ(trained.status, 0) << trained.text;
  return run;
}

class Search : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scratch_ = new wscsl::testing::ScratchDir("search");
    wscsl::testing::write_image_folder(dir() / "folder");
  }
  static void TearDownTestSuite() {
    delete scratch_;
    scratch_ = nullptr;
  }
  static fs::path dir() { return scratch_->path(); }
  static fs::path images() { return dir() / "folder" / "images"; }

  // The whole library path: an index of the folder searched by row, against the module's ranking
  // of every row (the neighbours must be the first k of that ranking, in its order).
  static void expect_exhaustive_ranking(const fs::path& index) {
    wscsl::host::GlobalOptions global;
    global.plugin_paths = {WSCSL_PLUGIN_DIR};
    search::IndexSearcher searcher(global, index);
    ASSERT_EQ(searcher.rows(), 24);
    for (std::int64_t row : {0, 13}) {
      search::SearchOptions options;
      options.k = 5;
      options.pool = 5;
      options.block_rows = 3;  // blocks smaller than a chunk, crossing chunk boundaries
      options.measure_recall = true;
      const auto results = searcher.search(searcher.item(row), options, row);
      ASSERT_EQ(results.size(), searcher.manifest().conditions.size());
      for (const search::ConditionNeighbours& r : results) {
        const search::IndexedCondition& c = searcher.condition(r.condition);
        ASSERT_EQ(r.neighbours.size(), 5u) << r.condition;
        for (const search::Neighbour& n : r.neighbours)
          EXPECT_NE(n.row, row);
        for (std::size_t i = 1; i < r.neighbours.size(); ++i)
          EXPECT_LE(r.neighbours[i - 1].distance, r.neighbours[i].distance) << r.condition;
        if (c.comparison == search::Comparison::Distances) {
          // A function of ψ_k alone: the block products find exactly the module's top k, and the
          // distance is the module's Euclidean distance of ψ_k, computed here by hand.
          EXPECT_DOUBLE_EQ(r.recall, 1.0) << r.condition;
          const torch::Tensor q = searcher.item(row).psi[0][c.embedding];
          for (const search::Neighbour& n : r.neighbours) {
            const torch::Tensor x = searcher.item(n.row).psi[0][c.embedding];
            double sum = 0;
            for (std::int64_t e = 0; e < q.size(0); ++e) {
              const double d = q[e].item<double>() - x[e].item<double>();
              sum += d * d;
            }
            EXPECT_NEAR(n.distance, std::sqrt(sum), 1e-5 + 1e-5 * std::sqrt(sum)) << r.condition;
          }
        }
      }
      // With every row in the pool, the module ranks the whole index: recall 1 for every module.
      options.pool = searcher.rows();
      for (const search::ConditionNeighbours& r : searcher.search(searcher.item(row), options, row))
        EXPECT_DOUBLE_EQ(r.recall, 1.0) << r.condition;
    }
  }

  static wscsl::testing::ScratchDir* scratch_;
};

wscsl::testing::ScratchDir* Search::scratch_ = nullptr;

TEST_F(Search, AWeakModuleIndexesAFolderSearchesItAndExtendsIt) {
  const std::string run = train(dir(), "weak", "type = \"discovernet\"\n");
  const fs::path index = dir() / "weak_index";
  // Half the folder through a list file, in chunks of 5; then the folder: only the rest is added.
  std::string list;
  for (int i = 0; i < 24; i += 2)
    list += fmt::format("images/{}/{}.{}\n", i % 2 ? "a" : "b", i, i % 3 ? "png" : "jpg");
  wscsl::testing::write_text(dir() / "folder" / "half.txt", list);
  const Output half =
      run_wscsl("index " + run + " --list " + (dir() / "folder" / "half.txt").string() + " --out " +
                index.string() + " --chunk 5");
  ASSERT_EQ(half.status, 0) << half.text;
  EXPECT_TRUE(contains(half.text, "indexed 5/12 images")) << half.text;
  EXPECT_TRUE(contains(half.text, "12 images (12 added)")) << half.text;
  const Output rest = run_wscsl("index " + run + " --images " + images().string() + " --out " +
                                index.string() + " --chunk 7");
  ASSERT_EQ(rest.status, 0) << rest.text;
  EXPECT_TRUE(contains(rest.text, "24 images (12 added)")) << rest.text;
  const Output again =
      run_wscsl("index " + run + " --images " + images().string() + " --out " + index.string());
  EXPECT_EQ(again.status, 0) << again.text;
  EXPECT_TRUE(contains(again.text, "is in " + index.string() + " already (24 images)"))
      << again.text;

  // The manifest: the run's checkpoint, the dataset's conditions through the OT alignment.
  const nlohmann::json manifest = nlohmann::json::parse(read_bytes(index / "manifest.json"));
  EXPECT_EQ(manifest["rows"], 24);
  EXPECT_EQ(manifest["chunks"], nlohmann::json({5, 5, 2, 7, 5}));
  // How it was made: the input of each call that added images.
  EXPECT_EQ(manifest["inputs"],
            nlohmann::json({"--list " + (dir() / "folder" / "half.txt").string(),
                            "--images " + images().string()}));
  EXPECT_EQ(manifest["condition_module"]["supervision"], "weak");
  EXPECT_TRUE(
      contains(manifest["condition_module"]["alignment"].get<std::string>(), "alignment (ot)"));
  ASSERT_EQ(manifest["conditions"].size(), 2u);  // DiscoverNet scores triplets only: no "fused"
  EXPECT_EQ(manifest["conditions"][0]["name"], "color");
  EXPECT_EQ(manifest["conditions"][0]["comparison"], "distances");
  // A NumPy file: ψ of the first chunk, K × 5 rows × E float32.
  const std::string psi = read_bytes(index / "chunks" / "000000.psi.npy");
  EXPECT_EQ(psi.rfind("\x93NUMPY\x01", 0), 0u);
  EXPECT_TRUE(
      contains(psi.substr(0, 128), "'descr': '<f4', 'fortran_order': False, 'shape': (2, 5, "))
      << psi.substr(0, 128);
  EXPECT_EQ(manifest["arrays"]["embeddings"], 2);  // DiscoverNet: K = the conditions

  // The terminal table, JSON lines and the picture.
  const Output table = run_wscsl("search " + index.string() + " --item 3 -k 4");
  ASSERT_EQ(table.status, 0) << table.text;
  EXPECT_TRUE(contains(table.text, "color (module distances of psi")) << table.text;
  EXPECT_TRUE(contains(table.text, "rank  distance")) << table.text;
  const fs::path picture = dir() / "weak.png";
  const Output json =
      run_wscsl("search " + index.string() + " --query " + (images() / "a" / "1.png").string() +
                " --condition size -k 3 --json --picture " + picture.string());
  ASSERT_EQ(json.status, 0) << json.text;
  const nlohmann::json line = nlohmann::json::parse(json.text);
  EXPECT_EQ(line["condition"], "size");
  ASSERT_EQ(line["neighbours"].size(), 3u);
  EXPECT_EQ(line["neighbours"][0]["rank"], 1);
  // The query's own file is in the index: its nearest neighbour, at distance 0.
  EXPECT_EQ(line["neighbours"][0]["image"], fs::canonical(images() / "a" / "1.png").string());
  EXPECT_NEAR(line["neighbours"][0]["distance"].get<double>(), 0.0, 1e-5);
  const wscsl::plot::Canvas png = wscsl::plot::Canvas::read_png(picture);
  EXPECT_EQ(png.width(), 4 + 74 * 4 + 4);  // the query and 3 neighbours of 64 px
  EXPECT_EQ(png.height(), 30 + 22 + 74);   // one condition

  expect_exhaustive_ranking(index);
}

TEST_F(Search, ASupervisedModuleRanksByItsConditionedPairScores) {
  const std::string run = train(dir(), "supervised", "type = \"csn_masks\"\n");
  const fs::path index = dir() / "supervised_index";
  const Output made =
      run_wscsl("index " + run + " --images " + images().string() + " --out " + index.string());
  ASSERT_EQ(made.status, 0) << made.text;
  const nlohmann::json manifest = nlohmann::json::parse(read_bytes(index / "manifest.json"));
  EXPECT_EQ(manifest["condition_module"]["supervision"], "conditioned");
  EXPECT_EQ(manifest["condition_module"]["alignment"], "identity (supervised module)");
  ASSERT_EQ(manifest["conditions"].size(), 2u);
  EXPECT_EQ(manifest["conditions"][1]["name"], "size");
  EXPECT_EQ(manifest["conditions"][1]["comparison"], "pair_scores");
  EXPECT_EQ(manifest["conditions"][1]["condition"], 1);
  EXPECT_EQ(manifest["conditions"][1]["embedding"], 1);
  const Output found = run_wscsl("search " + index.string() + " --item 5 --condition all -k 3");
  ASSERT_EQ(found.status, 0) << found.text;
  EXPECT_TRUE(contains(found.text, "size (module pair scores, candidates by psi2)")) << found.text;
  expect_exhaustive_ranking(index);
}

TEST_F(Search, APairDependentModuleReranksAPoolAndMeasuresItsRecall) {
  const std::string run =
      train(dir(), "pairs", "type = \"sce_attention\"\nbranch = \"pair\"\nhidden = 4\n");
  const fs::path index = dir() / "pairs_index";
  const Output made = run_wscsl("index " + run + " --images " + images().string() + " --out " +
                                index.string() + " --approximate --hnsw-m 4");
  ASSERT_EQ(made.status, 0) << made.text;
  EXPECT_TRUE(contains(made.text, "approximate index of every ψ (24 rows")) << made.text;
  const nlohmann::json manifest = nlohmann::json::parse(read_bytes(index / "manifest.json"));
  const nlohmann::json& fused = manifest["conditions"].back();
  EXPECT_EQ(fused["name"], "fused");
  EXPECT_EQ(fused["comparison"], "pair_scores");
  EXPECT_EQ(fused["embedding"], -1);
  // The pool's effect on recall, measured by the command against the module's ranking of all rows.
  const Output small =
      run_wscsl("search " + index.string() +
                " --item 2 --condition fused -k 3 --pool 3 --measure-recall --json");
  ASSERT_EQ(small.status, 0) << small.text;
  const double recall = nlohmann::json::parse(small.text)["recall@3"].get<double>();
  EXPECT_GE(recall, 0.0);
  EXPECT_LE(recall, 1.0);
  const Output whole =
      run_wscsl("search " + index.string() +
                " --item 2 --condition fused -k 3 --pool 24 --measure-recall --json");
  ASSERT_EQ(whole.status, 0) << whole.text;
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(whole.text)["recall@3"].get<double>(), 1.0);
  // The approximate candidates (HNSW on 24 rows finds them all), with their recall reported.
  const Output approximate = run_wscsl("search " + index.string() +
                                       " --item 2 -k 3 --approximate --measure-recall --json");
  ASSERT_EQ(approximate.status, 0) << approximate.text;
  std::istringstream lines(approximate.text);
  int conditions = 0;
  for (std::string l; std::getline(lines, l); ++conditions)
    EXPECT_DOUBLE_EQ(nlohmann::json::parse(l)["recall@3"].get<double>(), 1.0) << l;
  EXPECT_EQ(conditions, 3);  // color, size and fused
  expect_exhaustive_ranking(index);
}

// A PNG whose header announces width × height pixels: a decompression bomb when that is large.
std::string png_announcing(const fs::path& dir, std::uint32_t width, std::uint32_t height) {
  const fs::path small = dir / "small.png";
  wscsl::write_image_file(small, wscsl::testing::pattern_image(4, 4, 1));
  std::string png = read_bytes(small);
  for (int i = 0; i < 4; ++i) {
    png[16 + i] = static_cast<char>((width >> (24 - 8 * i)) & 0xFF);
    png[20 + i] = static_cast<char>((height >> (24 - 8 * i)) & 0xFF);
  }
  const auto crc =
      static_cast<std::uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(png.data() + 12), 4 + 13));
  for (int i = 0; i < 4; ++i)
    png[29 + i] = static_cast<char>((crc >> (24 - 8 * i)) & 0xFF);
  return png;
}

// Fashion-CRB renders its images and declares no way to prepare an image file: its splits are
// indexed and shown, and image files are refused naming the dataset, before anything is written.
TEST_F(Search, ARunOfAGeneratedDatasetIndexesItsSplitsAndRefusesImageFiles) {
  const fs::path pipeline = dir() / "rendered.toml";
  std::ofstream(pipeline)
      << "[dataset]\ntype = \"fashion_crb\"\ntrain_items = 16\nval_items = 8\n"
         "test_items = 8\ntrain_triplets = 8\nval_triplets = 8\n"
         "test_triplets = 8\n"
         "[backbone]\ntype = \"convnet\"\nwidth = 4\ndepth = 1\n"
         "embedding_dim = 6\n"
         "[condition_module]\ntype = \"discovernet\"\n"
         "[[losses]]\ntype = \"margin\"\n"
         "[[evaluators]]\ntype = \"alignment\"\n"
         "[trainer]\nepochs = 1\nbatch_size = 4\nthreads = 1\ndevice = \"cpu\"\n";
  const std::string run = (dir() / "rendered").string();
  const Output trained = run_wscsl("train " + pipeline.string() + " --run-dir " + run);
  ASSERT_EQ(trained.status, 0) << trained.text;
  const fs::path index = dir() / "rendered_index";
  const Output files =
      run_wscsl("index " + run + " --images " + images().string() + " --out " + index.string());
  EXPECT_EQ(files.status, 1);
  EXPECT_TRUE(contains(files.text,
                       "generates its images and declares no way to prepare an image "
                       "file, so " +
                           images().string()))
      << files.text;
  EXPECT_FALSE(fs::exists(index));
  const Output split = run_wscsl("index " + run + " --split test --out " + index.string());
  ASSERT_EQ(split.status, 0) << split.text;
  const fs::path nearest = dir() / "rendered_nearest.png";
  const Output by_row =
      run_wscsl("search " + index.string() + " --item 0 -k 2 --picture " + nearest.string());
  EXPECT_EQ(by_row.status, 0) << by_row.text;
  EXPECT_TRUE(fs::exists(nearest));
  const Output query =
      run_wscsl("search " + index.string() + " --query " + (images() / "a" / "1.png").string());
  EXPECT_EQ(query.status, 1);
  EXPECT_TRUE(contains(query.text, "so " + (images() / "a" / "1.png").string())) << query.text;
}

// ASEN attends over the convnet's 8×8 feature map. An index of its test split names its rows in
// `wscsl search` by the dataset's files, with their attributes, not "test/<id>"; the explorer's
// answer heads each condition's column with the attention map of the embedding the condition ranks
// by, as the module computes it from the backbone's map of the query (computed here apart).
TEST_F(Search, ASplitIndexNamesItsFilesAndAnAttendingModuleShowsItsMaps) {
  const std::string run = train(dir(), "attending",
                                "type = \"asen\"\nattribute_dim = 8\ncommon_dim = 8\n"
                                "embedding_dim = 8\n");
  const fs::path index = dir() / "attending_index";
  const Output made = run_wscsl("index " + run + " --split test --out " + index.string());
  ASSERT_EQ(made.status, 0) << made.text;
  const Output table = run_wscsl("search " + index.string() + " --item 0 -k 2 --condition color");
  ASSERT_EQ(table.status, 0) << table.text;
  EXPECT_FALSE(contains(table.text, "test/")) << table.text;
  EXPECT_TRUE(contains(table.text, "attributes") && contains(table.text, "color=")) << table.text;
  const Output lines =
      run_wscsl("search " + index.string() + " --item 0 -k 2 --condition color --json");
  ASSERT_EQ(lines.status, 0) << lines.text;
  const nlohmann::json line = nlohmann::json::parse(lines.text.substr(0, lines.text.find('\n')));
  for (const nlohmann::json& n : line["neighbours"]) {
    const std::string image = n["image"];
    EXPECT_TRUE(fs::exists(image) && image.rfind(images().string(), 0) == 0) << image;
    EXPECT_TRUE(n["attributes"].contains("color") && n["attributes"].contains("size")) << n;
  }

  wscsl::host::GlobalOptions global;
  global.plugin_paths = {WSCSL_PLUGIN_DIR};
  search::ExploreSource source(global, index, {}, "--run");
  const nlohmann::json answer = source.neighbours_of_row(3, 2, {"color", "size"});
  search::IndexSearcher searcher(global, index);
  wscsl::host::Pipeline& pipeline = searcher.model().pipeline();
  torch::NoGradGuard no_grad;
  const wscsl::BackboneOutput map = pipeline.backbone->embed_with_map(searcher.input(3));
  const torch::Tensor maps = pipeline.condition_module->attention_maps({map.phi, map.feature_map});
  ASSERT_EQ(maps.sizes(), torch::IntArrayRef({1, 2, 8, 8}));
  ASSERT_EQ(answer["conditions"].size(), 2u);
  for (const nlohmann::json& column : answer["conditions"]) {
    const search::IndexedCondition& c = searcher.condition(column["condition"]);
    const nlohmann::json& a = column["attention"];
    ASSERT_EQ(a["height"], 8);
    ASSERT_EQ(a["width"], 8);
    ASSERT_EQ(a["weights"].size(), 64u);
    double sum = 0;
    for (std::int64_t i = 0; i < 64; ++i) {
      const double w = a["weights"][static_cast<std::size_t>(i)];
      // The same float computation on the same input: equal up to the float's last bits.
      EXPECT_FLOAT_EQ(w, maps[0][c.embedding][i / 8][i % 8].item<float>()) << c.name << " " << i;
      sum += w;
    }
    // A softmax over 64 positions: 1 within 64 float roundings.
    EXPECT_NEAR(sum, 1.0, 64 * 6e-8) << c.name;
  }
  EXPECT_NE(answer["conditions"][0]["attention"], answer["conditions"][1]["attention"]);
}

TEST_F(Search, BadInputIsOneSentenceNamingTheFileAndWritesNothing) {
  const std::string run = train(dir(), "bad", "type = \"discovernet\"\n");
  const fs::path index = dir() / "bad_index";
  ASSERT_EQ(
      run_wscsl("index " + run + " --images " + images().string() + " --out " + index.string())
          .status,
      0);

  // A query that is not an image, and a decompression bomb.
  const fs::path text = dir() / "notes.png";
  wscsl::testing::write_text(text, "not an image\n");
  const Output not_image = run_wscsl("search " + index.string() + " --query " + text.string());
  EXPECT_EQ(not_image.status, 1);
  EXPECT_TRUE(contains(not_image.text, text.string() + ": ")) << not_image.text;
  EXPECT_TRUE(contains(not_image.text, "expected a JPEG or PNG image")) << not_image.text;
  const fs::path bomb = dir() / "bomb.png";
  write_bytes(bomb, png_announcing(dir(), 60000, 60000));
  const Output bombed = run_wscsl("search " + index.string() + " --query " + bomb.string());
  EXPECT_EQ(bombed.status, 1);
  EXPECT_TRUE(contains(bombed.text, bomb.string() + ": ")) << bombed.text;
  EXPECT_TRUE(contains(bombed.text, "3600000000")) << bombed.text;

  // An unknown condition, and a row the index does not have.
  const Output unknown = run_wscsl("search " + index.string() + " --item 0 --condition colour");
  EXPECT_EQ(unknown.status, 1);
  EXPECT_TRUE(contains(unknown.text, "has no condition 'colour'; its conditions are: color, size"))
      << unknown.text;
  const Output no_row = run_wscsl("search " + index.string() + " --item 24");
  EXPECT_EQ(no_row.status, 1);
  EXPECT_TRUE(contains(no_row.text, "has rows 0 to 23; there is no row 24")) << no_row.text;

  // An index of another run: refused by that run's search and index, the index unchanged.
  const std::string other = train(dir(), "other", "type = \"discovernet\"\n", 2);
  const std::string before = read_bytes(index / "manifest.json");
  const Output searched = run_wscsl("search " + index.string() + " --item 0 --run " + other);
  EXPECT_EQ(searched.status, 1);
  EXPECT_TRUE(contains(searched.text, index.string() + " was made from ")) << searched.text;
  EXPECT_TRUE(contains(searched.text, "index the images of this run into another folder"))
      << searched.text;
  const Output extended =
      run_wscsl("index " + other + " --images " + images().string() + " --out " + index.string());
  EXPECT_EQ(extended.status, 1);
  EXPECT_TRUE(contains(extended.text, index.string() + " was made from ")) << extended.text;
  EXPECT_EQ(read_bytes(index / "manifest.json"), before);

  // An index damaged on disk: a truncated array, a manifest that is not JSON.
  const fs::path psi = index / "chunks" / "000000.psi.npy";
  const std::string psi_bytes = read_bytes(psi);
  write_bytes(psi, psi_bytes.substr(0, psi_bytes.size() - 4));
  const Output truncated = run_wscsl("search " + index.string() + " --item 0");
  EXPECT_EQ(truncated.status, 1);
  EXPECT_TRUE(contains(truncated.text, psi.string() + ": ")) << truncated.text;
  EXPECT_TRUE(contains(truncated.text, "the index is damaged")) << truncated.text;
  write_bytes(psi, psi_bytes);
  write_bytes(index / "manifest.json", before.substr(0, before.size() / 2));
  const Output damaged = run_wscsl("search " + index.string() + " --item 0");
  EXPECT_EQ(damaged.status, 1);
  EXPECT_TRUE(contains(damaged.text, (index / "manifest.json").string() + ": not valid JSON"))
      << damaged.text;
  // An index of an earlier format (1: ψ stored [n, K, E]; 2: no inputs recorded): refused by
  // search and index alike, naming the command that makes it again in place; that command, run as
  // printed, makes it again of the same images, which search then reads.
  const auto held_images = [](const fs::path& at) {
    const nlohmann::json m = nlohmann::json::parse(read_bytes(at / "manifest.json"));
    nlohmann::json all = nlohmann::json::array();
    for (std::size_t c = 0; c < m["chunks"].size(); ++c)
      for (const nlohmann::json& image :
           nlohmann::json::parse(read_bytes(search::chunk_path(at, c, "images.json"))))
        all.push_back(image);
    return all;
  };
  write_bytes(index / "manifest.json", before);
  const nlohmann::json images_before = held_images(index);
  ASSERT_EQ(images_before.size(), 24u);
  nlohmann::json older = nlohmann::json::parse(before);
  older["format"] = 1;
  older.erase("inputs");
  write_bytes(index / "manifest.json", older.dump());
  const std::string rebuild = "wscsl index " + run + " --out " + index.string() + " --rebuild";
  const Output old_format = run_wscsl("search " + index.string() + " --item 0");
  EXPECT_EQ(old_format.status, 1);
  EXPECT_TRUE(contains(old_format.text,
                       "an index of format 1, which this wscsl does not read (it reads format " +
                           std::to_string(search::kIndexFormat) +
                           "); make it again in place, of the images it holds, with `" + rebuild +
                           "`"))
      << old_format.text;
  const Output old_extended =
      run_wscsl("index " + run + " --images " + images().string() + " --out " + index.string());
  EXPECT_EQ(old_extended.status, 1);
  EXPECT_TRUE(contains(old_extended.text, "`" + rebuild + "`")) << old_extended.text;
  const Output rebuilt = run_wscsl(rebuild.substr(std::string("wscsl ").size()));
  ASSERT_EQ(rebuilt.status, 0) << rebuilt.text;
  EXPECT_TRUE(contains(rebuilt.text, index.string() + ": made again, 24 images")) << rebuilt.text;
  const nlohmann::json remade = nlohmann::json::parse(read_bytes(index / "manifest.json"));
  EXPECT_EQ(remade["format"], search::kIndexFormat);
  EXPECT_EQ(remade["inputs"], nlohmann::json({"--rebuild of an index of format 1"}));
  EXPECT_EQ(held_images(index), images_before);
  EXPECT_FALSE(fs::exists(index.string() + ".rebuilding"));
  EXPECT_FALSE(fs::exists(index.string() + ".replaced"));
  const Output searched_again = run_wscsl("search " + index.string() + " --item 0 --json");
  EXPECT_EQ(searched_again.status, 0) << searched_again.text;

  const Output not_an_index = run_wscsl("search " + (dir() / "folder").string() + " --item 0");
  EXPECT_EQ(not_an_index.status, 1);
  EXPECT_TRUE(contains(not_an_index.text,
                       "is neither an index (no manifest.json) nor a run directory (no "
                       "resolved.toml)"))
      << not_an_index.text;
  // A folder given as the query: named as a folder, with what a query is.
  const Output folder_query =
      run_wscsl("search " + index.string() + " --query " + images().string());
  EXPECT_EQ(folder_query.status, 1);
  EXPECT_TRUE(contains(folder_query.text, images().string() +
                                              " is a folder; a query is one JPEG or PNG image "
                                              "file"))
      << folder_query.text;

  // A run directory, as explore takes it: one without an index names the command that makes
  // RUN/index, which search then reads.
  const Output no_index = run_wscsl("search " + run + " --item 0");
  EXPECT_EQ(no_index.status, 1);
  const std::string make_index = "wscsl index " + run + " --split test";
  EXPECT_TRUE(contains(no_index.text, run + " is a run without an index: `" + make_index + "`"))
      << no_index.text;
  ASSERT_EQ(run_wscsl(make_index.substr(std::string("wscsl ").size())).status, 0);
  const Output by_run = run_wscsl("search " + run + " --item 0 --json");
  EXPECT_EQ(by_run.status, 0) << by_run.text;
  // The split's row is named by the dataset's file for it.
  EXPECT_TRUE(contains(by_run.text, "\"query\":\"row 0 (" + images().string())) << by_run.text;

  // A run moved since it was indexed: --run says where it is now; given as the run directory,
  // RUN/index is searched with that run.
  const std::string moved = run + "_moved";
  fs::rename(run, moved);
  const Output lost = run_wscsl("search " + index.string() + " --item 0");
  EXPECT_EQ(lost.status, 1);
  EXPECT_TRUE(contains(lost.text, index.string() + " was made from the run " + run +
                                      ", which is not there now (moved or removed?); name where "
                                      "it is with --run RUN"))
      << lost.text;
  EXPECT_EQ(run_wscsl("search " + index.string() + " --item 0 --run " + moved).status, 0);
  EXPECT_EQ(run_wscsl("search " + moved + " --item 0").status, 0);
  const Output lost_explored = run_wscsl("explore " + index.string() + " --compare " +
                                         index.string() + " --run " + moved + " --port 0");
  EXPECT_EQ(lost_explored.status, 1);
  EXPECT_TRUE(contains(lost_explored.text, "name where it is with --compare-run RUN"))
      << lost_explored.text;
  fs::rename(moved, run);

  // explore: a port in use names --port; a refused --static leaves no folder behind.
  {
    const wscsl::test::BusyPort busy;
    // Bounded: a server that did start would serve until stopped.
    const Output in_use = wscsl::test::run_command(
        "WSCSL_PLUGIN_PATH=" WSCSL_PLUGIN_DIR " timeout 60 " WSCSL_BINARY " explore " +
        index.string() + " --port " + std::to_string(busy.port()));
    EXPECT_EQ(in_use.status, 1);
    EXPECT_TRUE(contains(in_use.text, "give another port with --port")) << in_use.text;
  }
  const fs::path static_out = dir() / "static_refused";
  const Output static_no_row =
      run_wscsl("explore " + index.string() + " --static " + static_out.string() + " --query 99");
  EXPECT_EQ(static_no_row.status, 1);
  EXPECT_TRUE(contains(static_no_row.text, "has no row 99")) << static_no_row.text;
  EXPECT_FALSE(fs::exists(static_out));

  // An empty folder: refused, no index made.
  fs::create_directories(dir() / "empty");
  const Output empty = run_wscsl("index " + run + " --images " + (dir() / "empty").string() +
                                 " --out " + (dir() / "empty_index").string());
  EXPECT_EQ(empty.status, 1);
  EXPECT_TRUE(contains(
      empty.text, (dir() / "empty").string() + ": the folder holds no files; nothing to index"))
      << empty.text;
  EXPECT_FALSE(fs::exists(dir() / "empty_index"));

  // A folder with a few unusable files: skipped and listed by default, refused with --strict.
  const fs::path mixed = dir() / "mixed";
  fs::create_directories(mixed);
  for (int i = 0; i < 5; ++i)
    wscsl::write_image_file(mixed / fmt::format("{}.png", i),
                            wscsl::testing::pattern_image(10, 10, 40 + i));
  wscsl::testing::write_text(mixed / "readme.txt", "pictures of shoes\n");
  const std::string good = read_bytes(mixed / "0.png");
  write_bytes(mixed / "cut.png", good.substr(0, good.size() / 2));
  write_bytes(mixed / "huge.png", png_announcing(dir(), 60000, 60000));
  const Output strict = run_wscsl("index " + run + " --images " + mixed.string() + " --out " +
                                  (dir() / "strict_index").string() + " --strict");
  EXPECT_EQ(strict.status, 1);
  EXPECT_TRUE(
      contains(strict.text, "3 of the 8 files of " + mixed.string() + " are not usable images: "))
      << strict.text;
  for (const char* file : {"cut.png", "huge.png", "readme.txt"})
    EXPECT_TRUE(contains(strict.text, (fs::canonical(mixed) / file).string() + " (")) << file;
  EXPECT_FALSE(fs::exists(dir() / "strict_index"));
  const Output skipped = run_wscsl("index " + run + " --images " + mixed.string() + " --out " +
                                   (dir() / "mixed_index").string());
  EXPECT_EQ(skipped.status, 0) << skipped.text;
  EXPECT_TRUE(contains(skipped.text, "5 images (5 added, 3 files skipped)")) << skipped.text;
  EXPECT_TRUE(contains(skipped.text,
                       "wscsl: warning: skipped " + (fs::canonical(mixed) / "cut.png").string()))
      << skipped.text;
  const nlohmann::json manifest =
      nlohmann::json::parse(read_bytes(dir() / "mixed_index" / "manifest.json"));
  EXPECT_EQ(manifest["skipped"].size(), 3u);

  // A folder of nothing but unusable files is refused even without --strict.
  const fs::path junk = dir() / "junk";
  wscsl::testing::write_text(junk / "a.jpg", "text\n");
  const Output all_bad = run_wscsl("index " + run + " --images " + junk.string() + " --out " +
                                   (dir() / "junk_index").string());
  EXPECT_EQ(all_bad.status, 1);
  EXPECT_TRUE(
      contains(all_bad.text, "1 of the 1 files of " + junk.string() + " is not a usable image: "))
      << all_bad.text;
  EXPECT_FALSE(fs::exists(dir() / "junk_index"));
}

// The AVX2 distance of the HNSW graphs against a loop in double precision, for every remainder of
// its 16- and 8-float steps. Each of the n squares and sums rounds once in float (u = 2⁻²⁴) and
// each difference once more, so the float result lies within (n + 3)·u of the exact sum,
// relatively.
TEST(L2Distance, TheAvx2DistanceIsTheSumOfSquaredDifferences) {
  const search::L2Distance distance = search::simd_l2_distance();
  if (!distance) GTEST_SKIP() << "this CPU lacks AVX2 or FMA: hnswlib's own distance serves";
  torch::manual_seed(5);
  for (std::size_t n = 1; n <= 70; ++n) {
    const torch::Tensor x = torch::randn({static_cast<std::int64_t>(n)});
    const torch::Tensor y = torch::randn({static_cast<std::int64_t>(n)});
    double exact = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      const double d = static_cast<double>(x[static_cast<std::int64_t>(i)].item<float>()) -
                       static_cast<double>(y[static_cast<std::int64_t>(i)].item<float>());
      exact += d * d;
    }
    const float got = distance(x.data_ptr<float>(), y.data_ptr<float>(), &n);
    EXPECT_NEAR(got, exact, static_cast<double>(n + 3) * std::ldexp(1.0, -24) * exact)
        << n << " dimensions";
  }
}

}  // namespace
