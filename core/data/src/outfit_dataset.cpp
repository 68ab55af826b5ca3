#include "wscsl/data/outfit_dataset.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <torch/types.h>

#include "wscsl/error.hpp"
#include "wscsl/util/text.hpp"

namespace fs = std::filesystem;

namespace wscsl {
namespace {

IdLists id_lists(const std::vector<std::vector<std::int64_t>>& lists) {
  std::vector<std::int64_t> offsets = {0}, items;
  for (const std::vector<std::int64_t>& l : lists) {
    items.insert(items.end(), l.begin(), l.end());
    offsets.push_back(static_cast<std::int64_t>(items.size()));
  }
  return {torch::tensor(offsets, torch::kLong), torch::tensor(items, torch::kLong)};
}

bool all_usable(const std::vector<std::int64_t>& ids, const std::set<std::int64_t>& unusable) {
  return std::none_of(ids.begin(), ids.end(), [&](std::int64_t id) { return unusable.count(id); });
}

// The order the splits' compatibility lines and questions are read and their problems reported:
// that of the splits' names.
constexpr Split kSplitsByName[] = {Split::Test, Split::Train, Split::Val};

std::string not_an_item(const std::string& name, const OutfitSplitSource& src) {
  return fmt::format("{} is not an item of {}; expected \"<set_id>_<index>\" of an outfit there",
                     quoted_excerpt(name), src.file.string());
}

}  // namespace

struct ResolvedLine {
  std::vector<std::int64_t> items;
  bool compatible = false;
};

struct ResolvedQuestion {
  std::vector<std::int64_t> question, candidates;
  std::int64_t answer = 0;
  std::int64_t blank_position = 0;
};

struct OutfitDataset::SplitTasks {
  std::vector<ResolvedLine> lines;
  std::vector<ResolvedQuestion> questions;
};

namespace {

std::vector<ResolvedLine> resolve_compatibility(const OutfitSplitSource& src, BadRows& bad) {
  std::vector<ResolvedLine> out;
  for (const CompatibilityRecord& r : read_compatibility_file(src.compatibility, bad)) {
    ResolvedLine line{{}, r.compatible};
    for (const std::string& name : r.items) {
      const auto it = src.items.find(name);
      if (it == src.items.end()) {
        bad.reject(src.compatibility, r.line, "item " + not_an_item(name, src));
        line.items.clear();
        break;
      }
      line.items.push_back(it->second.image);
    }
    if (!line.items.empty()) out.push_back(std::move(line));
  }
  return out;
}

std::vector<ResolvedQuestion> resolve_blanks(const OutfitSplitSource& src) {
  const std::vector<BlankRecord> records = read_blank_file(src.blanks);
  std::vector<ResolvedQuestion> out;
  for (std::size_t q = 0; q < records.size(); ++q) {
    const BlankRecord& r = records[q];
    const auto fail = [&](const std::string& what) {
      throw DataError(fmt::format("{}: question {}: {}", src.blanks.string(), q, what));
    };
    if (!out.empty() && r.answers.size() != records[0].answers.size())
      fail(fmt::format("'answers' has {} items; expected {} like question 0", r.answers.size(),
                       records[0].answers.size()));
    const auto lookup = [&](const std::vector<std::string>& names, const char* field,
                            std::vector<std::int64_t>& images, std::vector<std::int64_t>& outfits) {
      for (std::size_t i = 0; i < names.size(); ++i) {
        const auto it = src.items.find(names[i]);
        if (it == src.items.end())
          fail(fmt::format("{}[{}] {}", field, i, not_an_item(names[i], src)));
        images.push_back(it->second.image);
        outfits.push_back(it->second.outfit);
      }
    };
    ResolvedQuestion rq;
    std::vector<std::int64_t> question_outfits, answer_outfits;
    lookup(r.question, "question", rq.question, question_outfits);
    lookup(r.answers, "answers", rq.candidates, answer_outfits);
    rq.blank_position = r.blank_position;
    switch (src.answer) {
      case BlankAnswer::First:
        rq.answer = 0;
        break;
      case BlankAnswer::SameOutfit: {
        // The released loader: the answer is the candidate of question[0]'s set_id.
        std::vector<std::size_t> matches;
        for (std::size_t a = 0; a < answer_outfits.size(); ++a)
          if (answer_outfits[a] == question_outfits[0]) matches.push_back(a);
        if (matches.size() != 1)
          fail(
              fmt::format("{} of the answers share the set_id of question[0] {}; expected "
                          "exactly one, the right answer",
                          matches.size(), quoted_excerpt(r.question[0])));
        rq.answer = static_cast<std::int64_t>(matches[0]);
        break;
      }
    }
    out.push_back(std::move(rq));
  }
  return out;
}

}  // namespace

OutfitImages outfit_images(const std::map<Split, fs::path>& split_files, OutfitLayout layout,
                           const fs::path& image_folder, FileProblems& problems) {
  OutfitImages out;
  ImageList& images = out.catalog.images;
  images.folder = existing_directory(image_folder, "outfit image folder");
  images.index = image_folder;
  std::unordered_map<std::string, std::int64_t> image_of;
  for (Split split : image_splits()) {
    const fs::path& file = split_files.at(split);
    OutfitSplitSource& src = out.catalog.splits[split];
    src.file = file;
    std::vector<OutfitRecord> records;
    src.read = problems.attempt([&] { records = read_outfit_split(file, layout); });
    for (std::size_t o = 0; o < records.size(); ++o) {
      const OutfitRecord& record = records[o];
      std::vector<std::int64_t> ids;
      for (const OutfitEntry& entry : record.items) {
        const std::string key = outfit_item_key(record.set_id, entry.index);
        std::string name, image_file;
        switch (layout) {
          case OutfitLayout::PolyvoreOutfits:
            name = entry.item_id;
            image_file = entry.item_id + ".jpg";
            break;
          case OutfitLayout::Maryland:
            name = key;
            image_file = fmt::format("{}/{}.jpg", record.set_id, entry.index);
            break;
        }
        const auto id = static_cast<std::int64_t>(images.entries.size());
        const auto [it, fresh] = image_of.emplace(name, id);
        if (fresh) {
          images.entries.push_back({image_file, id + 1});
          out.listed_by.push_back(
              fmt::format("{} (outfit {}, set_id '{}')", file.string(), o, record.set_id));
          out.entries.push_back(entry);
        }
        ids.push_back(it->second);
        src.items.emplace(key, OutfitItemRef{it->second, static_cast<std::int64_t>(o)});
      }
      src.outfits.push_back(std::move(ids));
    }
  }
  return out;
}

OutfitDataset::OutfitDataset(const OutfitDatasetOptions& options, TypeSpaces spaces,
                             const fs::path& types_file)
    : ImageDataset(options),
      options_(options),
      spaces_(std::move(spaces)),
      held_out_(spaces_.types.size(), false) {
  for (const std::string& type : options.held_out_types) {
    const std::int64_t t = spaces_.type_index(type);
    if (t < 0)
      throw DataError(
          fmt::format("held_out_types: '{}' is not an item type of {}; expected one "
                      "of {}",
                      type, types_file.string(), join(spaces_.types, ", ")));
    held_out_[static_cast<std::size_t>(t)] = true;
  }
}

OutfitDataset::~OutfitDataset() = default;

Contract OutfitDataset::contract_of(const OutfitDatasetOptions&) {
  Contract c;
  c.provides = {{Resource::TripletConditions},
                {Resource::Outfits},
                {Resource::TypePairConditions},
                {Resource::ItemText, kTitleField},
                {Resource::ItemText, kCategoryField}};
  return c;
}

DatasetInfo OutfitDataset::info() const {
  std::vector<ConditionInfo> conditions;
  for (std::size_t k = 0; k < spaces_.conditions.size(); ++k)
    conditions.push_back({spaces_.condition_name(k), {}});
  DatasetInfo d = image_info(std::move(conditions), image_splits());
  d.item_types = spaces_.types;
  d.text_fields = {kTitleField, kCategoryField};
  std::error_code ec;
  // Offered whenever something is there: a FIFO or a directory is then named by the text
  // encoder that reads it, not skipped without a word.
  if (fs::exists(fs::symlink_status(released_text_features(), ec)))
    d.text_features = released_text_features();
  return d;
}

void OutfitDataset::read_files() {
  FileProblems problems;
  catalog_ = std::make_unique<OutfitCatalog>(read_catalog(problems));
  for (Split split : kSplitsByName) {
    const OutfitSplitSource& src = catalog_->splits.at(split);
    auto tasks = std::make_unique<SplitTasks>();
    // A split whose outfits could not be read names no item: its files are only parsed.
    if (!src.compatibility.empty())
      problems.attempt([&] {
        if (src.read) {
          tasks->lines = resolve_compatibility(src, bad_rows_budget());
        } else {
          read_compatibility_file(src.compatibility, bad_rows_budget());
        }
      });
    if (!src.blanks.empty())
      problems.attempt([&] {
        if (src.read) {
          tasks->questions = resolve_blanks(src);
        } else {
          read_blank_file(src.blanks);
        }
      });
    tasks_[split] = std::move(tasks);
  }
  const OutfitSplitSource& train = catalog_->splits.at(Split::Train);
  if (problems.empty()) {
    const auto kept = [&](std::int64_t id) {
      return !held_out_[static_cast<std::size_t>(
          catalog_->item_types[static_cast<std::size_t>(id)])];
    };
    const bool any_pair =
        std::any_of(train.outfits.begin(), train.outfits.end(),
                    [&](const auto& o) { return std::count_if(o.begin(), o.end(), kept) >= 2; });
    if (!any_pair)
      problems.add(fmt::format(
          "{}: no outfit has two items{}; expected at least one to draw training triplets from",
          train.file.string(), options_.held_out_types.empty() ? "" : " outside held_out_types"));
  }
  problems.throw_if_any();
}

ImageList OutfitDataset::read_image_list(BadRows&) {
  return catalog_->images;
}

SplitData OutfitDataset::read_split(Split split, const ImageList& images, BadRows&) {
  const OutfitSplitSource& src = catalog_->splits.at(split);
  const std::vector<std::int64_t>& types = catalog_->item_types;
  const std::vector<ResolvedLine>& lines = tasks_.at(split)->lines;
  const std::vector<ResolvedQuestion>& questions = tasks_.at(split)->questions;

  // Decode every image the split refers to now; an unusable one (a bad row) takes its lines and
  // questions with it and leaves its outfits.
  std::set<std::int64_t> referenced;
  for (const auto& outfit : src.outfits)
    referenced.insert(outfit.begin(), outfit.end());
  for (const ResolvedLine& l : lines)
    referenced.insert(l.items.begin(), l.items.end());
  for (const ResolvedQuestion& q : questions) {
    referenced.insert(q.question.begin(), q.question.end());
    referenced.insert(q.candidates.begin(), q.candidates.end());
  }
  const std::vector<std::int64_t> wanted(referenced.begin(), referenced.end());
  const std::vector<std::int64_t> ok = usable(wanted);
  std::set<std::int64_t> unusable;
  std::set_difference(wanted.begin(), wanted.end(), ok.begin(), ok.end(),
                      std::inserter(unusable, unusable.end()));

  const bool training = split == Split::Train;
  std::vector<std::vector<std::int64_t>> outfits;
  for (const auto& outfit : src.outfits) {
    std::vector<std::int64_t> kept;
    for (std::int64_t id : outfit)
      if (!unusable.count(id) &&
          !(training && held_out_[static_cast<std::size_t>(types[static_cast<std::size_t>(id)])]))
        kept.push_back(id);
    outfits.push_back(std::move(kept));
  }
  auto sampler = std::make_unique<OutfitTripletSampler>(outfits, types, spaces_);

  SplitData data;
  data.num_images = static_cast<std::int64_t>(images.entries.size());
  data.triplets = sampler->triplets(mix_seed(kLoadSeed, split_index(split)));
  data.conditions = sampler->conditions();
  OutfitData o;
  o.item_types = torch::tensor(types, torch::kLong);
  o.type_pair_conditions = spaces_.matrix();
  std::vector<std::vector<std::int64_t>> line_items;
  std::vector<std::int64_t> labels;
  for (const ResolvedLine& l : lines)
    if (all_usable(l.items, unusable)) {
      line_items.push_back(l.items);
      labels.push_back(l.compatible ? 1 : 0);
    }
  o.compatibility.outfits = id_lists(line_items);
  o.compatibility.labels = torch::tensor(labels, torch::kLong);
  std::vector<std::vector<std::int64_t>> question_items;
  std::vector<std::int64_t> candidates, answers, positions;
  std::int64_t width =
      questions.empty() ? 0 : static_cast<std::int64_t>(questions[0].candidates.size());
  for (const ResolvedQuestion& q : questions)
    if (all_usable(q.question, unusable) && all_usable(q.candidates, unusable)) {
      question_items.push_back(q.question);
      candidates.insert(candidates.end(), q.candidates.begin(), q.candidates.end());
      answers.push_back(q.answer);
      positions.push_back(q.blank_position);
    }
  o.blanks.questions = id_lists(question_items);
  o.blanks.candidates = torch::tensor(candidates, torch::kLong)
                            .view({static_cast<std::int64_t>(answers.size()), width});
  o.blanks.answers = torch::tensor(answers, torch::kLong);
  o.blanks.blank_positions = torch::tensor(positions, torch::kLong);
  data.outfits = std::move(o);
  data.texts[kTitleField] = catalog_->titles;
  data.texts[kCategoryField] = catalog_->categories;
  data.files = {{src.file}, src.compatibility, src.blanks};
  samplers_[split] = std::move(sampler);
  return data;
}

at::Tensor OutfitDataset::draw_epoch_triplets(Split split, std::int64_t epoch, std::uint64_t seed) {
  return samplers_.at(split)->triplets(
      mix_seed(mix_seed(seed, split_index(split)), static_cast<std::uint64_t>(epoch)));
}

}  // namespace wscsl
