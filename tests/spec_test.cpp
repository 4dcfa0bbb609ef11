// Why this file exists: a pipeline spec is what a user writes by hand, so every mistake in
// it must come back as one line naming the source, line and column, the operator, the
// valid range and what was given; and a valid spec must build the pipeline it says (the
// resolved spec, recorded in every run's JSON, must rebuild the same pipeline).
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "tests/test_data.h"
#include "transforms/pipeline.h"
#include "transforms/recipes.h"
#include "transforms/registry.h"
#include "transforms/spec.h"

namespace pipebench {
namespace {

// Parses and builds; returns the SpecError's message ("" when it built).
std::string error_of(const std::string& yaml) {
  try {
    Pipeline::build(parse_pipeline_spec(yaml, "my.yaml"));
  } catch (const SpecError& e) {
    return e.what();
  }
  return "";
}

void expect_error(const std::string& yaml, const std::string& where,
                  const std::vector<std::string>& mentions) {
  const std::string msg = error_of(yaml);
  ASSERT_FALSE(msg.empty()) << yaml;
  EXPECT_EQ(msg.rfind("my.yaml:" + where + ": ", 0), 0u) << msg;
  for (const auto& m : mentions) EXPECT_NE(msg.find(m), std::string::npos) << m << " in: " << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
}

TEST(Spec, BadSpecsNameLineColumnOperatorRangeAndValue) {
  // An unknown operator, with the nearest names.
  expect_error("[decode, random_resized_crp, normalize]", "1:10",
               {"unknown operator 'random_resized_crp'", "random_resized_crop"});
  // A value out of range, on the second line of a file.
  expect_error("transforms:\n  - random_resized_crop: {size: -3}\n  - normalize\n", "2:33",
               {"random_resized_crop: size", "[1, 8192]", "'-3'"});
  // A wrong type.
  expect_error("[{horizontal_flip: {p: maybe}}, normalize]", "1:24",
               {"horizontal_flip: p", "number", "'maybe'"});
  expect_error("[{random_crop: {size: 32, pad_if_needed: 3}}, normalize]", "1:42",
               {"pad_if_needed", "true or false"});
  // A list of the wrong length.
  expect_error("[center_crop, {normalize: {mean: [0.5, 0.5]}}]", "1:34",
               {"normalize: mean", "list of 3"});
  // A missing required parameter.
  expect_error("[resize, center_crop, normalize]", "1:2", {"resize", "'size' is required"});
  // An unknown parameter, with the operator's own.
  expect_error("[{center_crop: {sise: 3}}, normalize]", "1:17", {"unknown parameter 'sise'", "size"});
  // A choice outside its values.
  expect_error("[{random_resized_crop: {interpolation: lanczos}}, normalize]", "1:40",
               {"interpolation", "bilinear", "'lanczos'"});
  // Wrong stage order: a geometric operator after the tensor exists.
  expect_error("[center_crop, normalize, horizontal_flip]", "1:26",
               {"horizontal_flip", "before normalize"});
  // ROI decode with no crop to fuse.
  expect_error("{decode: {mode: roi}, transforms: [{resize: {size: [64, 64]}}, normalize]}", "1:10",
               {"mode roi", "crop"});
  expect_error("{decode: {mode: fast}, transforms: [center_crop, normalize]}", "1:17",
               {"decode: mode", "full, scaled, roi, auto", "'fast'"});
  // normalize before the size is fixed; no tensor at the end.
  expect_error("[resize: {size: 256}, normalize]", "1:23", {"normalize", "varies per image"});
  expect_error("[center_crop]", "1:2", {"ends with a uint8 image"});
  // A crop larger than what precedes it, where torchvision would fail too.
  expect_error("[{resize: {size: [100, 100]}}, {random_crop: {size: 128}}, normalize]", "1:33",
               {"random_crop", "larger than its input", "pad_if_needed"});
  // A batch operator before collate (before a per-sample operator), and a per-sample one
  // under batch.
  expect_error("[center_crop, mixup, normalize]", "1:15", {"mixup", "batch operator", "after collate"});
  expect_error("{transforms: [center_crop, normalize], batch: [normalize]}", "1:48",
               {"normalize", "per-sample operator", "batch"});
  expect_error("{transforms: [center_crop, normalize], batch: [{cutmix: {alpha: 0}}]}", "1:65",
               {"cutmix", "alpha", "0"});
  // A declared variant must say which stage it speeds up.
  expect_error("{transforms: [center_crop, normalize], variants: [{recipe: x, fixes: speed}]}", "1:70",
               {"fixes", "read, decode, transform, collate, batch_ops", "'speed'"});
  // Unknown top-level keys and YAML syntax errors.
  expect_error("{transform: [center_crop, normalize]}", "1:2", {"unknown key 'transform'"});
  expect_error("[center_crop, {normalize: {mean: [1, 2, 3}}]", "1:42", {"not valid YAML"});
}

// collate: {dtype: uint8} keeps samples uint8 until after the copy: float-only operators
// are refused where they stand, with the collate's line; NHWC refuses cutmix's NCHW boxes.
TEST(Spec, CollateUint8RefusesFloatOnlyOperators) {
  const std::string head = "collate: {dtype: uint8, layout: NHWC}\ntransforms:\n  - center_crop\n";
  expect_error(head + "  - normalize\n  - {random_erasing: {value: random}}\n", "5:6",
               {"random_erasing", "float32 tensor", "collate: {dtype: uint8, layout: NHWC} (line 1)",
                "float32"});
  expect_error(head + "  - {random_erasing: {value: 0}}\n", "4:6", {"random_erasing", "(line 1)"});
  expect_error(head + "  - {to_dtype: {scale: true}}\n  - normalize\n", "4:6", {"to_dtype", "uint8"});
  expect_error(head + "  - convert_color_yuv\n", "4:5", {"convert_color_yuv"});
  expect_error(head + "  - normalize\n  - normalize\n", "4:5",
               {"normalize must end the per-sample operators", "normalize cannot follow it"});
  expect_error(head + "  - normalize\nbatch:\n  - {mixup_cutmix: {mixup_alpha: 0.8}}\n", "6:6",
               {"mixup_cutmix", "mixes the pixels", "uint8", "(line 1)"});
  expect_error("{transforms: [center_crop, normalize], batch: [cutmix], collate: {layout: NHWC}}", "1:48",
               {"cutmix", "NCHW", "layout: NHWC"});
  // A uint8 chain must still end at a fixed size.
  expect_error("{collate: {dtype: uint8}, transforms: [horizontal_flip]}", "1:40",
               {"varies per sample", "uint8"});
}

// collate finish: device leaves the flip and the mixing to the device: it needs uint8
// NHWC (what the device operators take) and then allows the pixel-mixing batch operators,
// cutmix's boxes included; the spec round-trips with it.
TEST(Spec, CollateFinishOnDevice) {
  expect_error("{transforms: [center_crop, normalize], collate: {dtype: uint8, finish: device}}", "1:49",
               {"finish: device needs {dtype: uint8, layout: NHWC}", "layout: NCHW"});
  expect_error("{transforms: [center_crop, normalize], collate: {layout: NHWC, finish: device}}", "1:49",
               {"finish: device", "dtype: float32"});
  expect_error("{transforms: [center_crop], collate: {dtype: uint8, finish: gpu}}", "1:61",
               {"finish must be one of host, device", "gpu"});
  const std::string text =
      "{name: d, transforms: [random_resized_crop, horizontal_flip, normalize], "
      "collate: {dtype: uint8, layout: NHWC, finish: device}, batch: [cutmix, label_smoothing]}";
  const auto spec = parse_pipeline_spec(text, "x");
  EXPECT_EQ(spec.collate_finish, "device");
  const auto p = Pipeline::build(spec);
  EXPECT_TRUE(p->finishes_on_device());
  EXPECT_TRUE(p->defers_flip());
  EXPECT_NE(p->plan_text().find("; horizontal_flip, cutmix, normalize after the copy)"), std::string::npos)
      << p->plan_text();
  // The batch operators on the host: cutmix's draw comes back, label_smoothing runs; no
  // pixels are needed (a null batch). Without a vector the draws are dropped.
  const int32_t labels[4] = {0, 1, 2, 3};
  std::vector<float> soft(4 * 4);
  BatchData b{nullptr, 4, 3, 224, 224, labels, soft.data(), 4};
  Rng rng(5);
  std::vector<MixDraw> draws;
  p->run_batch(b, rng, nullptr, &draws);
  ASSERT_EQ(draws.size(), 1u);
  EXPECT_TRUE(draws[0].cut);
  EXPECT_NE(soft[0], 1.0f);  // mixed and smoothed
  EXPECT_NO_THROW(p->run_batch(b, rng));
  const std::string yaml = spec.to_yaml();
  EXPECT_NE(yaml.find("finish: device"), std::string::npos) << yaml;
  EXPECT_EQ(parse_pipeline_spec(yaml, "--pipeline").to_yaml(), yaml);
  // A flip that does not end the operators runs on the CPU; finish: host is the default.
  const auto mid = Pipeline::build(parse_pipeline_spec(
      "{transforms: [horizontal_flip, center_crop, normalize], collate: {dtype: uint8, layout: NHWC, finish: device}}", "x"));
  EXPECT_FALSE(mid->defers_flip());
  EXPECT_EQ(parse_pipeline_spec("{transforms: [center_crop]}", "x").to_yaml().find("finish"), std::string::npos);
}

TEST(Spec, CollateUint8AndNhwcBuildAndRoundTrip) {
  const auto spec = parse_pipeline_spec(
      "{name: u8, transforms: [random_resized_crop, horizontal_flip, normalize], "
      "collate: {dtype: uint8, layout: NHWC}, batch: [label_smoothing]}", "x");
  const auto p = Pipeline::build(spec, {}, {});
  EXPECT_EQ(p->output().dtype, SampleDtype::kUint8);
  EXPECT_EQ(p->output().layout, BatchLayout::kNHWC);
  EXPECT_EQ(p->output().text(), "uint8 NHWC 224x224x3");
  EXPECT_EQ(p->output().bytes(), 224u * 224 * 3);
  ASSERT_TRUE(p->deferred_normalize().has_value());
  EXPECT_FLOAT_EQ(p->deferred_normalize()->std[1], 0.224f);
  // normalize is not a per-sample step any more.
  EXPECT_EQ(p->step_labels(), (std::vector<std::string>{"random_resized_crop+horizontal_flip"}));
  const std::string text = spec.to_yaml();
  EXPECT_NE(text.find("collate: {dtype: uint8, layout: NHWC}"), std::string::npos) << text;
  EXPECT_EQ(parse_pipeline_spec(text, "--pipeline").to_yaml(), text);
  // Without normalize: the raw pixels, nothing deferred; float32 NHWC keeps its normalize.
  const auto raw = Pipeline::build(parse_pipeline_spec("{transforms: [center_crop], collate: {dtype: uint8}}", "x"));
  EXPECT_FALSE(raw->deferred_normalize().has_value());
  EXPECT_EQ(raw->output().text(), "uint8 NCHW 3x224x224");
  const auto f = Pipeline::build(parse_pipeline_spec("{transforms: [center_crop, normalize], collate: {layout: NHWC}}", "x"));
  EXPECT_EQ(f->output().text(), "float32 NHWC 224x224x3");
  EXPECT_FALSE(f->deferred_normalize().has_value());
  EXPECT_EQ(f->output().bytes(), 224u * 224 * 3 * 4);
  // The default is unchanged.
  EXPECT_TRUE(Pipeline::build(recipe_spec("imagenet_train"))->output().in_place());
}

TEST(Spec, ShortAndLongFormsBuildTheSamePipeline) {
  const auto a = Pipeline::build(parse_pipeline_spec(
      "[decode, {random_resized_crop: {size: 176}}, horizontal_flip, normalize]", "--pipeline"));
  const auto b = Pipeline::build(parse_pipeline_spec(
      "name: mine\ndecode: {mode: full}\ntransforms:\n  - random_resized_crop: {size: 176}\n"
      "  - horizontal_flip: {p: 0.5}\n  - normalize: {mean: imagenet, std: imagenet}\n"
      "collate: {dtype: float32, layout: NCHW}\n",
      "mine.yaml"));
  EXPECT_EQ(a->output_shape(), (std::array<int, 3>{3, 176, 176}));
  EXPECT_EQ(a->plan_text(), b->plan_text());
  EXPECT_EQ(a->plan_text(), "decode(full) -> random_resized_crop+horizontal_flip+normalize");
  const auto jpeg = testing::make_jpeg(320, 240, 5);
  std::vector<float> x(a->output_floats()), y(b->output_floats());
  PipelineWorkspace wa(*a), wb(*b);
  Rng r1 = Rng::for_sample(1, 0, 3), r2 = Rng::for_sample(1, 0, 3);
  a->run(jpeg, "x.jpg", r1, wa, x.data());
  b->run(jpeg, "x.jpg", r2, wb, y.data());
  EXPECT_EQ(x, y);
}

TEST(Spec, ResolvedSpecRebuildsTheSamePipeline) {
  for (const auto& name : recipe_names()) {
    const auto spec = recipe_spec(name, 160);
    const std::string text = spec.to_yaml();
    EXPECT_EQ(text.find('\n'), std::string::npos) << text;  // one line: a --pipeline value
    const auto again = parse_pipeline_spec(text, "--pipeline");
    EXPECT_EQ(again.to_yaml(), text);
    EXPECT_EQ(Pipeline::build(again)->plan_text(), Pipeline::build(spec)->plan_text()) << name;
  }
}

TEST(Spec, AutoDecodePlansRoiOnlyWhenACropFollows) {
  EXPECT_EQ(Pipeline::build(parse_pipeline_spec(
                "{decode: {mode: auto}, transforms: [random_resized_crop, horizontal_flip, normalize]}", "x"))
                ->decode_plan(), "roi");
  EXPECT_EQ(Pipeline::build(parse_pipeline_spec(
                "{decode: {mode: auto}, transforms: [{resize: {size: 256}}, center_crop, normalize]}", "x"))
                ->decode_plan(), "full");
}

TEST(Spec, FilesAreReadAndMissingOnesNamed) {
  const auto dir = testing::scratch_dir("spec_files");
  const auto file = dir / "mine.yaml";
  std::ofstream(file) << "transforms: [center_crop, normalize]\n";
  const auto spec = pipeline_spec_from_flag(file.string());
  EXPECT_EQ(spec.name, "mine");
  EXPECT_EQ(spec.source, file.string());
  try {
    pipeline_spec_from_flag((dir / "nope.yaml").string());
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("nope.yaml"), std::string::npos) << e.what();
  }
}

// Random and truncated YAML: always a SpecError (or a valid spec), never a crash or hang.
TEST(Spec, FuzzedTextGivesAClearErrorOrASpec) {
  const std::string seed =
      "name: x\ndecode: {mode: roi}\ntransforms:\n  - random_resized_crop: {size: 176, scale: [0.08, 1]}\n"
      "  - horizontal_flip: {p: 0.5}\n  - normalize: {mean: imagenet, std: [0.2, 0.2, 0.2]}\n";
  Rng rng(42);
  const std::string alphabet = "[]{}:,-\n #'\"&*!|>%@`0123456789.abcxyz_";
  for (int i = 0; i < 3000; ++i) {
    std::string text = seed.substr(0, static_cast<size_t>(rng.uniform_int(0, seed.size())));
    const int edits = static_cast<int>(rng.uniform_int(0, 6));
    for (int k = 0; k < edits && !text.empty(); ++k) {
      const size_t at = static_cast<size_t>(rng.uniform_int(0, text.size() - 1));
      text[at] = alphabet[static_cast<size_t>(rng.uniform_int(0, alphabet.size() - 1))];
    }
    if (i % 7 == 0) text = std::string(static_cast<size_t>(rng.uniform_int(0, 40)), '[');
    try {
      Pipeline::build(parse_pipeline_spec(text, "fuzz"));
    } catch (const SpecError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("fuzz", 0), 0u) << e.what();
    }
  }
}

TEST(Registry, EveryOperatorHasADocumentedSchema) {
  const auto& reg = OpRegistry::instance();
  for (const char* name : {"decode", "random_resized_crop", "center_crop", "random_crop", "resize",
                           "horizontal_flip", "vertical_flip", "normalize", "random_mask",
                           "convert_color_yuv", "scale"}) {
    const OpSchema* op = reg.find(name);
    ASSERT_NE(op, nullptr) << name;
    EXPECT_FALSE(op->doc.empty()) << name;
    for (const auto& p : op->params) EXPECT_FALSE(p.doc.empty()) << name << "." << p.name;
  }
  const std::string text = reg.describe();
  EXPECT_NE(text.find("random_resized_crop"), std::string::npos);
  EXPECT_NE(text.find("scale: list of 2 floats, default [0.08, 1.0], [0, 1]"), std::string::npos) << text;
  EXPECT_NE(reg.markdown_table().find("| `RandomResizedCrop` | `random_resized_crop` |"), std::string::npos);
}

}  // namespace
}  // namespace pipebench
