#include "tensorboard_log.hpp"

#include <fmt/format.h>

#include "wscsl/util/checkpoint_manifest.hpp"

namespace fs = std::filesystem;

namespace wscsl::host {
namespace {

void flatten(const ConfigNode& node, const std::string& name,
             std::map<std::string, HParamValue>& out) {
  switch (node.type()) {
    case ConfigNode::Type::Table:
      for (const ConfigMember& m : node.members())
        flatten(m.value, name.empty() ? m.key : name + "." + m.key, out);
      return;
    case ConfigNode::Type::Array: {
      bool tables = !node.items().empty();
      for (const ConfigNode& item : node.items())
        tables = tables && item.is_table();
      if (!tables) {
        out[name] = node.repr();
        return;
      }
      for (std::size_t i = 0; i < node.items().size(); ++i)
        flatten(node.items()[i], fmt::format("{}.{}", name, i), out);
      return;
    }
    case ConfigNode::Type::String:
      out[name] = node.as_string();
      return;
    case ConfigNode::Type::Integer:
    case ConfigNode::Type::Float:
      out[name] = node.as_number();
      return;
    case ConfigNode::Type::Boolean:
      out[name] = node.as_boolean();
      return;
  }
}

std::string hparam_text(const HParamValue& value) {
  if (const double* d = std::get_if<double>(&value)) return fmt::format("{}", *d);
  if (const bool* b = std::get_if<bool>(&value)) return *b ? "true" : "false";
  return std::get<std::string>(value);
}

// metrics.jsonl's names of an epoch's values, as tags; "epoch" is the epoch's number.
std::string epoch_tag(const std::string& name) {
  if (name.rfind("val/", 0) == 0) return name;
  return "epoch/" + name;
}

}  // namespace

std::map<std::string, HParamValue> pipeline_hparams(const ConfigNode& resolved) {
  std::map<std::string, HParamValue> out;
  flatten(resolved, "", out);
  return out;
}

std::string hparams_group(const std::map<std::string, HParamValue>& hparams) {
  std::string text;
  for (const auto& [name, value] : hparams)
    if (name != "trainer.seed") text += fmt::format("{}={}\n", name, hparam_text(value));
  return "options-" + sha256_hex(text).substr(0, 12);
}

TensorBoardLog::TensorBoardLog(const RunDirectory& run, const Pipeline& pipeline)
    : run_(run), log_every_(pipeline.trainer.log_every), log_(run.root()) {
  const std::map<std::string, HParamValue> hparams = pipeline_hparams(pipeline.resolved);
  log_.session_start(hparams, hparams_group(hparams));
  log_.flush();
}

void TensorBoardLog::step(const TrainingState& state, const StepReport& report) {
  ++steps_;
  triplets_ += report.triplets;
  seconds_ += report.seconds;
  if (state.global_step % log_every_ != 0) return;
  NamedValues values = {{"loss", report.losses.total}, {"lr", report.lr}};
  for (const auto& [name, value] : report.losses.terms)
    values.emplace_back("loss/" + name, value);
  if (seconds_ > 0) {
    values.emplace_back("steps_per_s", static_cast<double>(steps_) / seconds_);
    values.emplace_back("triplets_per_s", static_cast<double>(triplets_) / seconds_);
  }
  log_.training(state.global_step, values);
  steps_ = triplets_ = 0;
  seconds_ = 0.0;
}

void TensorBoardLog::epoch(const TrainingState& state,
                           const std::map<std::string, double>& metrics) {
  NamedValues values;
  for (const auto& [name, value] : metrics)
    if (name != "epoch") values.emplace_back(epoch_tag(name), value);
  log_.epoch(state.global_step, state.epoch + 1, values);
  log_.flush();
}

void TensorBoardLog::finish(const TrainingState& state, const EvaluationResult& test) {
  NamedValues values;
  for (const NamedMetric& m : test.metrics)
    values.emplace_back(m.name, m.value);
  log_.test(state.global_step, values);
  std::error_code ec;
  if (fs::exists(run_.curves(), ec)) log_.picture(state.global_step, "curves", run_.curves());
  for (const fs::path& artifact : test.artifacts)
    if (artifact.extension() == ".png")
      log_.picture(state.global_step, artifact.stem().string(), artifact);
  log_.session_end(true);
  log_.flush();
}

}  // namespace wscsl::host
