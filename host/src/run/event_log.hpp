// A run's TensorBoard event files (events.out.tfevents.*): Event messages in TFRecord framing,
// holding the training scalars, each epoch's metrics, the test metrics, PNG pictures and the run's
// hyperparameters as TensorBoard's HParams tab reads them. Each process start writes a new file;
// what a resumed run would log again is cut from the older files first (truncate_event_files).
//
// Tags: "train/…" at logged steps, "epoch/…" and "val/…" once an epoch ends (with its number as
// "epoch/number"), "test/…" and "plots/…" after training. The truncation relies on this layout.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace wscsl::host {

using NamedValues = std::vector<std::pair<std::string, double>>;
// A hyperparameter: a number, a string or a truth value.
using HParamValue = std::variant<double, std::string, bool>;

class EventLog {
 public:
  // Starts a new event file in `dir`, named as TensorBoard's writers name theirs.
  explicit EventLog(const std::filesystem::path& dir);

  const std::filesystem::path& file() const { return file_; }

  // "train/<name>" at `step`.
  void training(std::int64_t step, const NamedValues& values);
  // The values (named "epoch/…" or "val/…") of epoch `epoch` (from 1), which ended at `step`.
  void epoch(std::int64_t step, std::int64_t epoch, const NamedValues& values);
  // "test/<name>" at `step`.
  void test(std::int64_t step, const NamedValues& values);
  // The PNG file `png` as "plots/<name>"; throws DataError when it is not a whole PNG.
  void picture(std::int64_t step, const std::string& name, const std::filesystem::path& png);
  // The HParams tab's session: its hyperparameters, and the group that runs differing only in
  // their seed share.
  void session_start(const std::map<std::string, HParamValue>& hparams, const std::string& group);
  void session_end(bool success);
  // Makes what was logged so far reach the file.
  void flush();

 private:
  void write(const std::string& event);
  std::filesystem::path file_;
  std::ofstream out_;
};

// Keeps in the event files of `dir` what a checkpoint after `epochs_done` epochs and `global_step`
// steps covers: the training scalars up to that step, the metrics of the epochs done, the
// hyperparameters; the test metrics and pictures go (the resumed run logs them again). A whole
// record that is not an Event stays where it was. A file left with no scalar and no such record is
// removed; a record cut short by a killed process ends its file.
void truncate_event_files(const std::filesystem::path& dir, std::int64_t epochs_done,
                          std::int64_t global_step);

// The event files of `dir`, oldest first.
std::vector<std::filesystem::path> event_files(const std::filesystem::path& dir);

}  // namespace wscsl::host
