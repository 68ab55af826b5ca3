// How a plugin tells the host which component types it provides.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <type_traits>

#include "wscsl/config/schema.hpp"
#include "wscsl/plugin/component.hpp"

namespace wscsl {

// What a component's constructor may consult besides its options.
struct BuildContext {
  const Facts& facts;  // host-derived values: "dataset.num_conditions", "backbone.embedding_dim"
};

// The type-erased recipe for one component type. Options travel as an opaque pointer between
// bind and create so that a pipeline can be validated without constructing anything.
struct ComponentFactory {
  Kind kind = Kind::Dataset;
  std::string type;
  SchemaDescription schema;
  std::function<std::shared_ptr<const void>(const ConfigNode& table, BindScope& scope)> bind;
  std::function<ConfigNode(const void* options)> to_config;
  std::function<std::shared_ptr<Component>(const void* options, const BuildContext& context)>
      create;
  // What the component provides and needs with these options (empty when Impl declares nothing).
  std::function<Contract(const void* options)> contract;
  Contract default_contract;  // with the default options, for `describe`
};

namespace registrar_detail {
template <class Impl, class = void>
struct DeclaresContract : std::false_type {};
template <class Impl>
struct DeclaresContract<
    Impl, std::void_t<decltype(Impl::contract_of(std::declval<const typename Impl::Options&>()))>>
    : std::true_type {};
}  // namespace registrar_detail

class Registrar {
 public:
  virtual ~Registrar();

  // Registers `Impl` as type `type` of Interface's kind. Impl needs a nested `Options` struct,
  // `static Schema<Options> schema()`, and a constructor taking (const Options&) or
  // (const Options&, const BuildContext&); it may declare `static Contract contract_of(const
  // Options&)` (contract.hpp).
  template <class Interface, class Impl>
  void add(const std::string& type);

 protected:
  virtual void add_factory(ComponentFactory factory) = 0;
};

template <class Interface, class Impl>
void Registrar::add(const std::string& type) {
  static_assert(std::is_base_of_v<Component, Interface>,
                "the first template argument must be a wscsl interface (Backbone, Loss, ...)");
  static_assert(std::is_base_of_v<Interface, Impl>, "Impl must derive from the interface");
  using Options = typename Impl::Options;
  static_assert(std::is_same_v<decltype(Impl::schema()), Schema<Options>>,
                "Impl must provide `static wscsl::Schema<Options> schema()`");
  constexpr bool with_context = std::is_constructible_v<Impl, const Options&, const BuildContext&>;
  static_assert(with_context || std::is_constructible_v<Impl, const Options&>,
                "Impl must be constructible from (const Options&) or "
                "(const Options&, const BuildContext&)");

  auto schema = std::make_shared<const Schema<Options>>(Impl::schema());
  ComponentFactory factory;
  factory.kind = Interface::kind_v;
  factory.type = type;
  factory.schema = schema->description();
  factory.bind = [schema](const ConfigNode& table, BindScope& scope) {
    return std::shared_ptr<const void>(std::make_shared<const Options>(schema->bind(table, scope)));
  };
  factory.to_config = [schema](const void* options) {
    return schema->to_config(*static_cast<const Options*>(options));
  };
  factory.create = [](const void* options, const BuildContext& context) {
    const Options& o = *static_cast<const Options*>(options);
    if constexpr (with_context) {
      return std::shared_ptr<Component>(std::make_shared<Impl>(o, context));
    } else {
      (void)context;
      return std::shared_ptr<Component>(std::make_shared<Impl>(o));
    }
  };
  factory.contract = [](const void* options) {
    if constexpr (registrar_detail::DeclaresContract<Impl>::value) {
      static_assert(
          std::is_same_v<decltype(Impl::contract_of(std::declval<const Options&>())), Contract>,
          "contract_of must return wscsl::Contract");
      return Impl::contract_of(*static_cast<const Options*>(options));
    } else {
      (void)options;
      return Contract{};
    }
  };
  const Options defaults{};
  factory.default_contract = factory.contract(&defaults);
  add_factory(std::move(factory));
}

}  // namespace wscsl
