// The explorer's page (host/web/), compiled into the binary so that it works offline and without
// an installed share folder; web_assets.cpp is generated from those files by EmbedAssets.cmake.
#pragma once

#include <string_view>

namespace wscsl::host::explore {

struct WebAsset {
  std::string_view content_type;
  std::string_view body;
};

// The asset named `name` ("index.html", "app.js", "style.css"); a null body when there is none.
WebAsset web_asset(std::string_view name);

}  // namespace wscsl::host::explore
