// What `wscsl explore` shows of the run behind an index: its module, the condition ↔ embedding
// alignment the index ranks by with each condition's alignment accuracy, its results and its
// curves, as JSON.
#pragma once

#include <nlohmann/json.hpp>

namespace wscsl::host::search {

class IndexSearcher;

// {name, link, index, run, rows, module, supervision, alignment: {source, conditions:
// [{condition, embedding, comparison, accuracy}]}, results: [[metric, value]], curves: {epochs,
// series}}. `link` names the run and the index's rows in a link to a view: "<run>.<8 hex>",
// the hex of the checkpoint and the index's first input, which fix what a row number means.
nlohmann::json run_summary(IndexSearcher& searcher);

}  // namespace wscsl::host::search
