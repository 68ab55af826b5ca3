// Named points where a test build can kill the process, to test what survives a crash there.
// Built with WSCSL_FAULT_INJECTION (the default where the tests are built), a process whose
// environment holds WSCSL_FAULT_AT=<point>[:<n>] sends itself SIGKILL the n-th time (default: the
// first) it reaches <point>. Otherwise, and in builds without it, fault_point does nothing.
#pragma once

namespace wscsl {

void fault_point(const char* point);

// The points in the checkpoint protocol, in the order a checkpoint passes them.
namespace faults {
inline constexpr const char* kAfterRotate = "checkpoint.after_rotate";  // older `last`s moved aside
inline constexpr const char* kBeforeData = "checkpoint.before_data";    // temporary file opened
inline constexpr const char* kAfterData = "checkpoint.after_data";      // archive written
inline constexpr const char* kAfterManifest =
    "checkpoint.after_manifest";                                        // manifest written, synced
inline constexpr const char* kAfterRename = "checkpoint.after_rename";  // renamed over the old one

// The points in building an image store (image_store.hpp).
inline constexpr const char* kStoreImageWritten = "image_store.image_written";  // one more image
inline constexpr const char* kStoreBeforeRename =
    "image_store.before_rename";  // complete and synced, not yet in place
}  // namespace faults

}  // namespace wscsl
