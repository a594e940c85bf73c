// The recipe fields norm_affine_precision and activation_precision (recipes/recipe.hpp): reading
// and errors, canonical strings (unchanged when high), canonicalization in sweeps, the lowering
// (elementwise_plan), and what `explain` says a peer runs instead.
#include <catch2/catch.hpp>

#include <string>

#include "recipes/canonical.hpp"
#include "recipes/compatibility.hpp"
#include "recipes/error.hpp"
#include "recipes/explain.hpp"
#include "recipes/fields.hpp"
#include "recipes/lowering.hpp"
#include "recipes/recipe_file.hpp"
#include "tests/support/recipe_text.hpp"

using namespace fp8lab::recipes;
namespace sc = fp8lab::sim::scaling;

namespace {

using fp8lab::testing::message_of;
using fp8lab::testing::recipe;

}  // namespace

TEST_CASE("norm_affine_precision and activation_precision are read, named and validated") {
  const Recipe r = recipe("scaling: mxfp8\nmx_scale_mode: floor\nnorm_affine_precision: mx\n"
                          "activation_precision: BF16\n");
  CHECK(r.norm_affine_precision == ElementwisePrecision::kMx);
  CHECK(r.activation_precision == ElementwisePrecision::kBf16);
  CHECK(field_text(r, "norm_affine_precision") == "mx");
  CHECK(field_text(r, "activation_precision") == "bf16");

  // Defaults: high, and absent from the canonical string, so every older run id stays.
  const Recipe plain = recipe("scaling: mxfp8\nmx_scale_mode: floor\n");
  CHECK(plain.norm_affine_precision == ElementwisePrecision::kHigh);
  CHECK(canonical_string(plain).find("norm_affine_precision") == std::string::npos);
  CHECK(canonical_string(plain).find("activation_precision") == std::string::npos);
  CHECK(canonical_string(r) ==
        canonical_string(plain) + ";norm_affine_precision=mx;activation_precision=bf16");
  CHECK(run_id(r) != run_id(plain));
  CHECK(run_id(recipe("scaling: mxfp8\nmx_scale_mode: floor\nnorm_affine_precision: high\n")) ==
        run_id(plain));

  // A bad value names the file, the field, the value and what is accepted.
  const auto bad = message_of("scaling: mxfp8\nnorm_affine_precision: fp8\n");
  CHECK_THAT(bad, Catch::Contains("r.yaml:2"));
  CHECK_THAT(bad, Catch::Contains("norm_affine_precision"));
  CHECK_THAT(bad, Catch::Contains("fp8"));
  CHECK_THAT(bad, Catch::Contains("accepted: high, bf16, mx"));
  CHECK_THAT(message_of("activation_precision: [mx]\n"), Catch::Contains("activation_precision"));

  // mx takes mxfp8's scale rule: refused with another scaling; bf16 goes with any.
  const auto wrong_scaling = message_of("scaling: current\nactivation_precision: mx\n");
  CHECK_THAT(wrong_scaling, Catch::Contains("activation_precision"));
  CHECK_THAT(wrong_scaling, Catch::Contains("scaling: mxfp8"));
  CHECK(recipe("scaling: current\nactivation_precision: bf16\n").activation_precision ==
        ElementwisePrecision::kBf16);
}

TEST_CASE("canonicalize runs mx outside mxfp8 high, and rule 1 turns both off") {
  Recipe r;  // delayed
  r.norm_affine_precision = ElementwisePrecision::kMx;
  const Canonical c = canonicalize(r);
  CHECK(c.recipe.norm_affine_precision == ElementwisePrecision::kHigh);
  REQUIRE(c.reasons.size() == 1);
  CHECK_THAT(c.reasons[0], Catch::Contains("norm_affine_precision=mx needs mxfp8"));

  Recipe all_high;
  all_high.override_linear_precision = {true, true, true};
  all_high.activation_precision = ElementwisePrecision::kBf16;
  CHECK(canonicalize(all_high).recipe.activation_precision == ElementwisePrecision::kHigh);
}

TEST_CASE("elementwise_plan lowers the fields: mx is the fprop input's MX plan") {
  Recipe r = recipe("scaling: mxfp8\nmx_scale_mode: floor\nfp8_format: E4M3\n"
                    "norm_affine_precision: mx\n");
  const ElementwisePlan norm = elementwise_plan(r, BeyondGemm::kNormAffine);
  CHECK(norm.precision == ElementwisePrecision::kMx);
  CHECK(norm.mx == plan(r, sc::Operand::kInput, sc::Gemm::kFprop));
  CHECK(norm.mx.kind == sc::QuantizeKind::kMx);
  CHECK(norm.mx.block == sc::BlockShape{1, 32});
  CHECK(norm.mx.mx_mode == E8M0Mode::kFloor);
  CHECK(norm.mx.format == fp8lab::sim::Format::E4M3);
  CHECK(elementwise_plan(r, BeyondGemm::kActivation).precision == ElementwisePrecision::kHigh);

  r.mx_scale_mode = E8M0Mode::kRceil;
  CHECK(elementwise_plan(r, BeyondGemm::kNormAffine).mx.mx_mode == E8M0Mode::kRceil);

  Recipe delayed;
  delayed.activation_precision = ElementwisePrecision::kMx;
  CHECK_THROWS_WITH(elementwise_plan(delayed, BeyondGemm::kActivation),
                    Catch::Contains("activation_precision = mx needs scaling mxfp8"));
  delayed.activation_precision = ElementwisePrecision::kBf16;
  CHECK(elementwise_plan(delayed, BeyondGemm::kActivation).precision ==
        ElementwisePrecision::kBf16);
}

TEST_CASE("explain says TE runs LayerNorm and activations in high precision") {
  const std::string text =
      explain_text("scaling: mxfp8\nmx_scale_mode: rceil\nnorm_affine_precision: mx\n", "r.yaml");
  CHECK_THAT(text, Catch::Contains("norm_affine_precision"));
  CHECK_THAT(text, Catch::Contains("microxcaling"));
  const Compatibility c = compatibility(recipe("scaling: mxfp8\nnorm_affine_precision: bf16\n"));
  CHECK(c.te_effective.norm_affine_precision == ElementwisePrecision::kHigh);
  // Nothing is said about a recipe that leaves them high.
  CHECK(explain_text("scaling: mxfp8\n", "r.yaml").find("norm_affine_precision") ==
        std::string::npos);
}
