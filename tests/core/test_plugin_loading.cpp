#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>

#include "wscsl/error.hpp"
#include "wscsl/plugin/toolchain.hpp"
#include "wscsl/runtime/plugin_manager.hpp"
#include "wscsl/version.hpp"

namespace fs = std::filesystem;
using namespace wscsl;

namespace {

const fs::path kFixtures = WSCSL_FIXTURE_DIR;
const fs::path kPlugins = WSCSL_PLUGIN_DIR;

fs::path fixture(const std::string& name) {
  return kFixtures / name / ("libwscsl_" + name + ".so");
}

std::string refusal(const fs::path& file) {
  Registry registry;
  PluginManager manager(registry);
  std::vector<std::string> warnings;
  try {
    manager.load_file(file, warnings);
  } catch (const PluginError& e) {
    EXPECT_TRUE(registry.plugins().empty()) << "nothing may be registered from a refused plugin";
    return e.what();
  }
  return "(loaded)";
}

wscsl_plugin_info good_info() {
  return wscsl_plugin_info{sizeof(wscsl_plugin_info),
                           WSCSL_PLUGIN_ABI_VERSION,
                           WSCSL_VERSION_MAJOR,
                           WSCSL_VERSION_MINOR,
                           WSCSL_VERSION_PATCH,
                           "demo",
                           "1.0",
                           "demo plugin",
                           "1.13.1 cpu",
                           WSCSL_TOOLCHAIN_FINGERPRINT};
}

HostVersions host() {
  HostVersions h = HostVersions::current();
  h.torch_version = "1.13.1 cpu";
  return h;
}

std::string check(const wscsl_plugin_info& info, std::vector<std::string>* warnings = nullptr) {
  std::vector<std::string> local;
  return check_plugin_info(&info, "/p/libwscsl_demo.so", host(), warnings ? *warnings : local);
}

}  // namespace

TEST(PluginCheck, AcceptsAMatchingPlugin) {
  std::vector<std::string> warnings;
  EXPECT_EQ(check(good_info(), &warnings), "");
  EXPECT_TRUE(warnings.empty());
}

TEST(PluginCheck, AbiMismatchNamesBothNumbers) {
  auto info = good_info();
  info.abi_version = WSCSL_PLUGIN_ABI_VERSION - 1;
  EXPECT_EQ(check(info), "plugin /p/libwscsl_demo.so was built for plugin ABI " +
                             std::to_string(WSCSL_PLUGIN_ABI_VERSION - 1) +
                             ", but this wscsl "
                             "uses plugin ABI " +
                             std::to_string(WSCSL_PLUGIN_ABI_VERSION) +
                             "; rebuild it against this wscsl SDK");
}

TEST(PluginCheck, NewerSdkIsRefused) {
  auto info = good_info();
  info.sdk_minor = WSCSL_VERSION_MINOR + 1;
  const std::string expected =
      "plugin 'demo' (/p/libwscsl_demo.so) was built against wscsl SDK " +
      std::to_string(WSCSL_VERSION_MAJOR) + "." + std::to_string(WSCSL_VERSION_MINOR + 1) +
      ", but this host is wscsl " + std::to_string(WSCSL_VERSION_MAJOR) + "." +
      std::to_string(WSCSL_VERSION_MINOR) + "; rebuild it against this SDK";
  EXPECT_EQ(check(info), expected);
}

TEST(PluginCheck, OtherLibTorchIsRefused) {
  auto info = good_info();
  info.torch_version = "2.1.0 cpu";
  EXPECT_EQ(check(info),
            "plugin 'demo' (/p/libwscsl_demo.so) was built with LibTorch 2.1.0 cpu, but this "
            "host uses LibTorch 1.13.1 cpu; tensors and modules cannot be shared between them");
  info.torch_version = "1.13.0 cpu";
  EXPECT_NE(check(info).find("was built with LibTorch 1.13.0 cpu"), std::string::npos)
      << "another patch release is another LibTorch";
}

TEST(PluginCheck, ACudaBuildOfTheSameLibTorchIsAnotherLibTorch) {
  auto info = good_info();
  info.torch_version = "1.13.1 cuda";
  EXPECT_EQ(check(info),
            "plugin 'demo' (/p/libwscsl_demo.so) was built with LibTorch 1.13.1 cuda, but this "
            "host uses LibTorch 1.13.1 cpu; tensors and modules cannot be shared between them");
}

TEST(PluginCheck, OtherStandardLibraryIsRefusedOtherCompilerWarns) {
  auto info = good_info();
  info.toolchain = "clang-15;libc++;cxx11abi=n/a";
  EXPECT_EQ(check(info),
            "plugin 'demo' (/p/libwscsl_demo.so) was built with libc++ but this host with "
            "libstdc++; C++ objects cannot be shared between them");
  info.toolchain = "gcc-99;libstdc++;cxx11abi=1";
  std::vector<std::string> warnings;
  EXPECT_EQ(check(info, &warnings), "");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("compiled by gcc-99"), std::string::npos);
}

TEST(PluginCheck, NameMustMatchTheFile) {
  auto info = good_info();
  info.name = "other";
  EXPECT_EQ(check(info),
            "/p/libwscsl_demo.so calls itself 'other', so its file must be named "
            "libwscsl_other.so");
}

TEST(PluginLoading, RefusesAPluginBuiltForAnotherAbi) {
  const std::string message = refusal(fixture("wrong_abi"));
  EXPECT_EQ(message, "plugin " + fs::canonical(fixture("wrong_abi")).string() +
                         " was built for plugin ABI 999, but this wscsl uses plugin ABI " +
                         std::to_string(WSCSL_PLUGIN_ABI_VERSION) +
                         "; rebuild it against this wscsl SDK");
}

TEST(PluginLoading, RefusesOtherLibTorchMisnamedNonPluginsAndThrowingRegistration) {
  EXPECT_NE(refusal(fixture("wrong_torch")).find("was built with LibTorch 1.0.1 cpu"),
            std::string::npos);
  const std::string host_torch = WSCSL_TORCH_IDENTITY;
  const std::string other_build =
      std::string(TORCH_VERSION) +
      (host_torch.rfind(" cpu") != std::string::npos ? " cuda" : " cpu");
  EXPECT_NE(refusal(fixture("other_torch_build"))
                .find("was built with LibTorch " + other_build + ", but this host uses LibTorch " +
                      host_torch),
            std::string::npos);
  EXPECT_NE(refusal(fixture("misnamed")).find("calls itself 'something_else'"), std::string::npos);
  EXPECT_NE(refusal(fixture("not_a_plugin"))
                .find("is not a wscsl plugin (it does not export "
                      "wscsl_plugin_info)"),
            std::string::npos);
  EXPECT_NE(refusal(fixture("throwing"))
                .find("failed to register its components: cannot "
                      "register today"),
            std::string::npos);
}

TEST(PluginLoading, RefusesASchemaThatTakesAnUnknownFact) {
  const std::string reason = refusal(fixture("unknown_fact"));
  EXPECT_NE(reason.find("plugin 'unknown_fact'"), std::string::npos) << reason;
  EXPECT_NE(reason.find("loss 'typo' option 'input_dim' takes the fact 'backbone.embeding_dim', "
                        "which the host does not establish; did you mean "
                        "'backbone.embedding_dim'?"),
            std::string::npos)
      << reason;
}

TEST(PluginLoading, LoadsInTreePluginsAndRecordsRefusals) {
  Registry registry;
  PluginManager manager(registry);
  std::vector<std::string> warnings;
  manager.load({{kPlugins, "test"}, {kFixtures / "wrong_abi", "test"}}, warnings);
  EXPECT_NE(registry.find(Kind::Loss, "margin"), nullptr);
  EXPECT_NE(registry.find(Kind::Dataset, "fashion_crb"), nullptr);
  ASSERT_EQ(registry.refused().size(), 1u);
  EXPECT_NE(registry.refused()[0].reason.find("ABI 999"), std::string::npos);
  // Loading the same directory twice is harmless.
  manager.load({{kPlugins, "again"}}, warnings);
  EXPECT_EQ(registry.refused().size(), 1u);
}

TEST(PluginLoading, DuplicateTypeIsAnErrorNamingBothFiles) {
  Registry registry;
  PluginManager manager(registry);
  std::vector<std::string> warnings;
  manager.load({{kPlugins, "test"}}, warnings);
  try {
    manager.load({{kFixtures / "duplicate_type", "test"}}, warnings);
    FAIL() << "expected a duplicate error";
  } catch (const PluginError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("loss type 'margin' is provided twice"), std::string::npos) << m;
    EXPECT_NE(m.find("libwscsl_margin.so"), std::string::npos) << m;
    EXPECT_NE(m.find("libwscsl_duplicate_type.so"), std::string::npos) << m;
  }
}

TEST(PluginSearchPath, NeverUsesRelativeOrWorldWritableDirectories) {
  const fs::path open_dir = fs::temp_directory_path() / "wscsl_world_writable";
  fs::create_directories(open_dir);
  ::chmod(open_dir.c_str(), 0777);
  const std::string env = ":relative/dir::" + kPlugins.string() + ":" + open_dir.string();
  ::setenv("WSCSL_PLUGIN_PATH", env.c_str(), 1);
  PluginSearch search;
  search.use_defaults = false;
  std::vector<std::string> warnings;
  const auto dirs = search.directories(warnings);
  ::unsetenv("WSCSL_PLUGIN_PATH");
  ASSERT_EQ(dirs.size(), 1u);
  EXPECT_EQ(dirs[0].path, fs::canonical(kPlugins));
  EXPECT_EQ(dirs[0].origin, "WSCSL_PLUGIN_PATH");
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find("relative entry 'relative/dir'"), std::string::npos);
  EXPECT_NE(warnings[1].find("world-writable"), std::string::npos);
  fs::remove_all(open_dir);
}

TEST(PluginSearchPath, CommandLineComesFirstAndDuplicatesCollapse) {
  PluginSearch search;
  search.use_environment = false;
  search.use_defaults = false;
  search.command_line = {kFixtures / "throwing"};
  search.pipeline = {kPlugins, kFixtures / "throwing"};
  std::vector<std::string> warnings;
  const auto dirs = search.directories(warnings);
  ASSERT_EQ(dirs.size(), 2u);
  EXPECT_EQ(dirs[0].origin, "--plugin-path");
  EXPECT_EQ(dirs[1].path, fs::canonical(kPlugins));
}
