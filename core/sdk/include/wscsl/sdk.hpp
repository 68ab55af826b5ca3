// Everything a plugin author needs: the interfaces, the option schema and the plugin macro.
#pragma once

#include "wscsl/config/schema.hpp"
#include "wscsl/error.hpp"
#include "wscsl/plugin/backbone.hpp"
#include "wscsl/plugin/condition_module.hpp"
#include "wscsl/plugin/dataset.hpp"
#include "wscsl/plugin/evaluator.hpp"
#include "wscsl/plugin/loss.hpp"
#include "wscsl/plugin/macros.hpp"
#include "wscsl/plugin/registrar.hpp"
#include "wscsl/plugin/text_encoder.hpp"
