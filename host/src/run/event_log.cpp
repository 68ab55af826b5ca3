#include "event_log.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>

#include <fmt/format.h>

#include "tensorboard_events.pb.h"
#include "tfrecord.hpp"
#include "wscsl/data/image_header.hpp"
#include "wscsl/error.hpp"
#include "wscsl/util/atomic_file.hpp"

namespace fs = std::filesystem;
namespace tb = wscsl::tensorboard;

namespace wscsl::host {
namespace {

constexpr const char* kFilePrefix = "events.out.tfevents.";
constexpr const char* kEpochNumberTag = "epoch/number";
constexpr const char* kTrainingPrefix = "train/";
constexpr const char* kSessionStartTag = "_hparams_/session_start_info";
constexpr const char* kSessionEndTag = "_hparams_/session_end_info";
// Pictures larger than this are not logged whole into an event file.
constexpr std::int64_t kMaxPicturePixels = std::int64_t{64} << 20;

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

tb::Event event_at(std::int64_t step) {
  tb::Event e;
  e.set_wall_time(now_seconds());
  e.set_step(step);
  return e;
}

std::string scalars_event(std::int64_t step, const std::string& prefix, const NamedValues& values) {
  tb::Event e = event_at(step);
  for (const auto& [name, value] : values) {
    tb::Summary::Value* v = e.mutable_summary()->add_value();
    v->set_tag(prefix + name);
    v->set_simple_value(static_cast<float>(value));
  }
  return e.SerializeAsString();
}

std::string hparams_event(const std::string& tag, const tb::HParamsPluginData& data) {
  tb::Event e = event_at(0);
  tb::Summary::Value* v = e.mutable_summary()->add_value();
  v->set_tag(tag);
  tb::SummaryMetadata::PluginData* plugin = v->mutable_metadata()->mutable_plugin_data();
  plugin->set_plugin_name("hparams");
  plugin->set_content(data.SerializeAsString());
  return e.SerializeAsString();
}

bool starts_with(const std::string& s, const char* prefix) {
  return s.rfind(prefix, 0) == 0;
}

// PNG's colour type (IHDR byte 25) as TensorBoard's colorspace.
int png_colorspace(const std::string& png) {
  switch (static_cast<unsigned char>(png[25])) {
    case 0:
      return 1;  // grey
    case 4:
      return 2;  // grey and alpha
    case 6:
      return 4;  // RGBA
    default:
      return 3;  // RGB, or a palette of RGB colours
  }
}

// What a resumed run keeps of one event.
bool covered(const tb::Event& e, std::int64_t epochs_done, std::int64_t global_step) {
  if (e.has_file_version()) return true;
  if (!e.has_summary()) return false;
  for (const tb::Summary::Value& v : e.summary().value()) {
    if (v.tag() == kEpochNumberTag) return v.simple_value() <= static_cast<float>(epochs_done);
    if (v.tag() == kSessionStartTag) return true;
  }
  return !e.summary().value().empty() && starts_with(e.summary().value(0).tag(), kTrainingPrefix) &&
         e.step() <= global_step;
}

bool has_scalars(const tb::Event& e) {
  return e.has_summary() && !e.summary().value().empty() &&
         e.summary().value(0).value_case() == tb::Summary::Value::kSimpleValue;
}

}  // namespace

EventLog::EventLog(const fs::path& dir) {
  char host[256] = {0};
  if (::gethostname(host, sizeof host - 1) != 0) std::strcpy(host, "localhost");
  const std::size_t sequence = event_files(dir).size();
  file_ = dir / fmt::format("{}{:010}.{}.{}.{}", kFilePrefix,
                            static_cast<long long>(std::time(nullptr)), host, ::getpid(), sequence);
  out_.open(file_, std::ios::binary | std::ios::app);
  if (!out_) throw Error(fmt::format("cannot create {}: {}", file_.string(), std::strerror(errno)));
  tb::Event e = event_at(0);
  e.set_file_version("brain.Event:2");
  write(e.SerializeAsString());
  flush();
}

void EventLog::training(std::int64_t step, const NamedValues& values) {
  write(scalars_event(step, kTrainingPrefix, values));
}

void EventLog::epoch(std::int64_t step, std::int64_t epoch, const NamedValues& values) {
  NamedValues with_number = values;
  with_number.insert(with_number.begin(), {kEpochNumberTag, static_cast<double>(epoch)});
  write(scalars_event(step, "", with_number));
}

void EventLog::test(std::int64_t step, const NamedValues& values) {
  write(scalars_event(step, "test/", values));
}

void EventLog::picture(std::int64_t step, const std::string& name, const fs::path& png) {
  const std::string bytes = read_file(png);
  const ImageHeader header = read_image_header(bytes, kMaxPicturePixels);
  if (!header.problem.empty() || header.format != ImageFormat::png)
    throw DataError(fmt::format("{} is not a whole PNG file{}", png.string(),
                                header.problem.empty() ? "" : ": " + header.problem));
  tb::Event e = event_at(step);
  tb::Summary::Value* v = e.mutable_summary()->add_value();
  v->set_tag("plots/" + name);
  tb::Summary::Image* image = v->mutable_image();
  image->set_height(static_cast<std::int32_t>(header.height));
  image->set_width(static_cast<std::int32_t>(header.width));
  image->set_colorspace(png_colorspace(bytes));
  image->set_encoded_image_string(bytes);
  write(e.SerializeAsString());
}

void EventLog::session_start(const std::map<std::string, HParamValue>& hparams,
                             const std::string& group) {
  tb::HParamsPluginData data;
  tb::SessionStartInfo* start = data.mutable_session_start_info();
  for (const auto& [name, value] : hparams) {
    google::protobuf::Value& v = (*start->mutable_hparams())[name];
    std::visit(
        [&v](const auto& x) {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, double>)
            v.set_number_value(x);
          else if constexpr (std::is_same_v<T, bool>)
            v.set_bool_value(x);
          else
            v.set_string_value(x);
        },
        value);
  }
  start->set_group_name(group);
  start->set_start_time_secs(now_seconds());
  write(hparams_event(kSessionStartTag, data));
}

void EventLog::session_end(bool success) {
  tb::HParamsPluginData data;
  tb::SessionEndInfo* end = data.mutable_session_end_info();
  end->set_status(success ? tb::STATUS_SUCCESS : tb::STATUS_FAILURE);
  end->set_end_time_secs(now_seconds());
  write(hparams_event(kSessionEndTag, data));
}

void EventLog::write(const std::string& event) {
  out_ << tfrecord(event);
}

void EventLog::flush() {
  out_.flush();
  if (!out_) throw Error(fmt::format("cannot write {}: {}", file_.string(), std::strerror(errno)));
}

std::vector<fs::path> event_files(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec))
    if (entry.is_regular_file(ec) && starts_with(entry.path().filename().string(), kFilePrefix))
      files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

void truncate_event_files(const fs::path& dir, std::int64_t epochs_done, std::int64_t global_step) {
  for (const fs::path& file : event_files(dir)) {
    std::string kept;
    bool keep_file = false;
    for (const std::string& record : read_tfrecords(file).records) {
      tb::Event e;
      // A whole record that is not an Event is not wscsl's to judge: it stays, and so does its file.
      if (!e.ParseFromString(record)) {
        keep_file = true;
        kept += tfrecord(record);
        continue;
      }
      if (!covered(e, epochs_done, global_step)) continue;
      keep_file = keep_file || has_scalars(e);
      kept += tfrecord(record);
    }
    std::error_code ec;
    if (keep_file)
      write_file_atomically(file, kept);
    else if (!fs::remove(file, ec) && ec)
      throw Error(fmt::format("cannot remove {}: {}", file.string(), ec.message()));
  }
}

}  // namespace wscsl::host
