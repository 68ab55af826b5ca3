// The tasks of the embedded outfit benchmark: compatibility lines and fill-in-the-blank questions
// drawn from the outfits of a split.
#include <algorithm>
#include <unordered_set>

#include "plan_parts.hpp"

namespace wscsl::data {
namespace {

constexpr int kMaxTries = 100;

// Outfits of one split by the types they contain.
class TypeIndex {
 public:
  TypeIndex(const OutfitBenchmarkPlan& plan, const std::vector<std::int64_t>& outfits,
            int max_items) {
    for (std::size_t o = 0; o < outfits.size(); ++o) {
      const BenchmarkOutfit& outfit = plan.outfits[static_cast<std::size_t>(outfits[o])];
      const int n = std::min(static_cast<int>(outfit.items.size()), max_items);
      for (int p = 0; p < n; ++p) {
        const auto t = static_cast<std::size_t>(
            plan.items[static_cast<std::size_t>(outfit.items[static_cast<std::size_t>(p)])].type);
        auto& list = with_type_[t];
        if (list.empty() || list.back().outfit != outfits[o]) list.push_back({outfits[o], {}});
        list.back().positions.push_back(p);
      }
    }
  }
  struct Entry {
    std::int64_t outfit;
    std::vector<int> positions;
  };
  const std::vector<Entry>& with_type(ItemType t) const {
    return with_type_[static_cast<std::size_t>(t)];
  }
  // How many outfits other than `outfit` hold an item of type t.
  std::size_t others_with(ItemType t, std::int64_t outfit) const {
    const auto& list = with_type(t);
    const bool own =
        std::any_of(list.begin(), list.end(), [&](const Entry& e) { return e.outfit == outfit; });
    return list.size() - (own ? 1 : 0);
  }

 private:
  std::array<std::vector<Entry>, kNumItemTypes> with_type_;
};

std::int64_t item_at(const OutfitBenchmarkPlan& plan, const OutfitSlot& s) {
  return plan.outfits[static_cast<std::size_t>(s.outfit)]
      .items[static_cast<std::size_t>(s.position)];
}

ItemType type_at(const OutfitBenchmarkPlan& plan, const OutfitSlot& s) {
  return plan.items[static_cast<std::size_t>(item_at(plan, s))].type;
}

std::vector<OutfitSlot> slots_of(const OutfitBenchmarkPlan& plan, std::int64_t outfit,
                                 int max_items) {
  const int n = std::min(
      static_cast<int>(plan.outfits[static_cast<std::size_t>(outfit)].items.size()), max_items);
  std::vector<OutfitSlot> slots;
  for (int p = 0; p < n; ++p)
    slots.push_back({outfit, p});
  return slots;
}

// A slot of type t (any type when `any_type`) in an outfit of the split other than `outfit` and
// `used_outfits`, whose item is not in `used_items`; nothing when none is found in kMaxTries.
bool draw_slot(Rng& rng, const OutfitBenchmarkPlan& plan, const TypeIndex& index,
               const std::vector<std::int64_t>& split_outfits, int max_items, bool any_type,
               ItemType t, std::int64_t outfit,
               const std::unordered_set<std::int64_t>& used_outfits,
               const std::unordered_set<std::int64_t>& used_items, OutfitSlot& out) {
  for (int attempt = 0; attempt < kMaxTries; ++attempt) {
    OutfitSlot s;
    if (any_type) {
      s.outfit = split_outfits[rng.below(split_outfits.size())];
      const int n =
          std::min(static_cast<int>(plan.outfits[static_cast<std::size_t>(s.outfit)].items.size()),
                   max_items);
      s.position = static_cast<int>(rng.below(static_cast<std::uint64_t>(n)));
    } else {
      const auto& list = index.with_type(t);
      if (list.empty()) return false;
      const auto& entry = list[rng.below(list.size())];
      s.outfit = entry.outfit;
      s.position = entry.positions[rng.below(entry.positions.size())];
    }
    if (s.outfit == outfit || used_outfits.count(s.outfit) || used_items.count(item_at(plan, s)))
      continue;
    out = s;
    return true;
  }
  return false;
}

bool draw_question(Rng& rng, const OutfitBenchmarkPlan& plan, const TypeIndex& index,
                   const std::vector<std::int64_t>& outfits, int max_items, bool any_type,
                   std::int64_t outfit, int blank, bool answer_first, BlankQuestion& q) {
  const std::vector<OutfitSlot> slots = slots_of(plan, outfit, max_items);
  std::unordered_set<std::int64_t> used_items, used_outfits;
  for (const OutfitSlot& s : slots)
    used_items.insert(item_at(plan, s));
  std::array<OutfitSlot, 3> wrong{};
  for (OutfitSlot& w : wrong) {
    if (!draw_slot(rng, plan, index, outfits, max_items, any_type,
                   type_at(plan, slots[static_cast<std::size_t>(blank)]), outfit, used_outfits,
                   used_items, w))
      return false;
    used_outfits.insert(w.outfit);
    used_items.insert(item_at(plan, w));
  }
  q.question.clear();
  for (const OutfitSlot& s : slots)
    if (s.position != blank) q.question.push_back(s);
  q.blank_position = blank + 1;
  q.correct = answer_first ? 0 : static_cast<int>(rng.below(4));
  for (int a = 0, w = 0; a < 4; ++a)
    q.answers[static_cast<std::size_t>(a)] = a == q.correct ? slots[static_cast<std::size_t>(blank)]
                                                            : wrong[static_cast<std::size_t>(w++)];
  return true;
}

bool rare_type(ItemType t) {
  return t == ItemType::Scarves || t == ItemType::Accessories;
}

}  // namespace

std::vector<CompatibilityLine> draw_compatibility(Rng& rng, const OutfitBenchmarkPlan& plan,
                                                  const std::vector<std::int64_t>& outfits,
                                                  int max_items, bool any_type,
                                                  std::size_t negatives) {
  const TypeIndex index(plan, outfits, max_items);
  std::vector<CompatibilityLine> lines;
  for (std::int64_t o : outfits)
    lines.push_back({true, slots_of(plan, o, max_items)});
  for (std::size_t k = 0; k < negatives && !outfits.empty(); ++k) {
    const std::vector<OutfitSlot> positive = slots_of(plan, outfits[k % outfits.size()], max_items);
    std::unordered_set<std::int64_t> used_items;
    for (const OutfitSlot& s : positive)
      used_items.insert(item_at(plan, s));
    CompatibilityLine line{false, {}};
    for (const OutfitSlot& s : positive) {
      OutfitSlot replacement = s;
      // Kept only when no other outfit of the split supplies its type (or every draw collides).
      if (draw_slot(rng, plan, index, outfits, max_items, any_type, type_at(plan, s), s.outfit, {},
                    used_items, replacement))
        used_items.insert(item_at(plan, replacement));
      line.items.push_back(replacement);
    }
    lines.push_back(line);
  }
  return lines;
}

std::vector<BlankQuestion> draw_polyvore_questions(Rng& rng, const OutfitBenchmarkPlan& plan,
                                                   const std::vector<std::int64_t>& outfits) {
  const int all = kMaxOutfitSize;
  const TypeIndex index(plan, outfits, all);
  std::vector<BlankQuestion> questions;
  for (std::int64_t o : outfits) {
    const std::vector<OutfitSlot> slots = slots_of(plan, o, all);
    std::vector<int> eligible;
    for (const OutfitSlot& s : slots)
      if (index.others_with(type_at(plan, s), o) >= 3) eligible.push_back(s.position);
    if (eligible.empty()) continue;
    int blank = static_cast<int>(rng.below(slots.size()));
    if (std::find(eligible.begin(), eligible.end(), blank) == eligible.end())
      blank = eligible[rng.below(eligible.size())];
    std::vector<int> blanks = {blank};
    for (int p : eligible)
      if (p != blank && rare_type(type_at(plan, slots[static_cast<std::size_t>(p)])))
        blanks.push_back(p);
    for (int b : blanks) {
      BlankQuestion q;
      if (draw_question(rng, plan, index, outfits, all, false, o, b, false, q))
        questions.push_back(q);
    }
  }
  return questions;
}

std::vector<BlankQuestion> draw_maryland_questions(Rng& rng, const OutfitBenchmarkPlan& plan,
                                                   const std::vector<std::int64_t>& outfits) {
  const int max_items = plan.maryland_max_items;
  const TypeIndex index(plan, outfits, max_items);
  std::vector<BlankQuestion> questions;
  if (outfits.size() < 4) return questions;
  for (std::int64_t o : outfits) {
    const std::size_t n = slots_of(plan, o, max_items).size();
    BlankQuestion q;
    if (draw_question(rng, plan, index, outfits, max_items, true, o, static_cast<int>(rng.below(n)),
                      true, q))
      questions.push_back(q);
  }
  return questions;
}

}  // namespace wscsl::data
