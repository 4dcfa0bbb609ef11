// make_seed_corpus OUT_DIR [--photos DIR]: the seed corpus of the harnesses, made on the
// fly like the tests' data (no binary files in the repository):
//
//   OUT_DIR/images/  small photo-like JPEGs (datasets/synthetic.h) in every subsampling the
//                    encoder offers, baseline and progressive; libjpeg-made CMYK, YCCK,
//                    4:1:1, restart-marker, arithmetic-coded and optimised-Huffman files;
//                    1000 x 1 and 1 x 1000 strips (extreme aspect ratios); the same image as
//                    PNG, BMP, PPM, PGM, TIFF and WebP (the formats the decoders hand to
//                    OpenCV imgcodecs); with --photos, the 4 smallest JPEGs under 48 KiB
//                    found there (data/photos-in when run.sh made it).
//   OUT_DIR/spec/    every shipped recipe's text, the README's example, the one-line form,
//                    and one spec per registered operator (its bench examples included).
//   OUT_DIR/json/    Google Benchmark JSON runs shaped as pipebench writes them (a
//                    data-bound sweep with loaders, samples and a pipeline_spec; repetitions
//                    with aggregate and errored rows; a minimal one).
//   OUT_DIR/spec.dict  libFuzzer dictionary: spec keys, operator and parameter names and
//                    choices, from the registry (so it follows new operators).
//
// Exit status 0, or 1 with a message when a file cannot be written.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <jpeglib.h>
#include <nlohmann/json.hpp>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include "datasets/synthetic.h"
#include "transforms/recipes.h"
#include "transforms/registry.h"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace pipebench;

namespace {

void write(const fs::path& path, const void* data, size_t size) {
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}
void write(const fs::path& path, const std::vector<uint8_t>& bytes) {
  write(path, bytes.data(), bytes.size());
}
void write(const fs::path& path, const std::string& text) { write(path, text.data(), text.size()); }

// --------------------------------------------------------------------------- images

struct LibjpegOptions {
  J_COLOR_SPACE stored = JCS_YCbCr;  // the file's colour space (JCS_CMYK, JCS_YCCK, ...)
  int h_samp = 2, v_samp = 2;        // luma sampling factors (4:1:1 is 4 x 1)
  int restart_rows = 0;              // restart marker every N MCU rows
  bool arithmetic = false;
  bool optimize = false;
};

/// Encodes a width x height image through the libjpeg API (what TurboJPEG's API cannot
/// make: CMYK/YCCK, 4:1:1, restart markers, arithmetic coding).
std::vector<uint8_t> libjpeg_encode(int width, int height, const LibjpegOptions& o) {
  const auto rgb = render_synthetic_rgb(width, height, 21);
  const bool four = o.stored == JCS_CMYK || o.stored == JCS_YCCK;
  std::vector<uint8_t> pixels;
  for (size_t i = 0; i < rgb.size(); i += 3) {
    if (four) {  // Adobe inverted CMYK of the RGB image: C = R, M = G, Y = B, K = 255
      pixels.insert(pixels.end(), {rgb[i], rgb[i + 1], rgb[i + 2], 255});
    } else {
      pixels.insert(pixels.end(), {rgb[i], rgb[i + 1], rgb[i + 2]});
    }
  }
  jpeg_compress_struct c{};
  jpeg_error_mgr err{};
  c.err = jpeg_std_error(&err);  // the inputs are ours: an error here is a bug, exit() is fine
  jpeg_create_compress(&c);
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&c, &buffer, &size);
  c.image_width = static_cast<JDIMENSION>(width);
  c.image_height = static_cast<JDIMENSION>(height);
  c.input_components = four ? 4 : 3;
  c.in_color_space = four ? JCS_CMYK : JCS_RGB;
  jpeg_set_defaults(&c);
  jpeg_set_quality(&c, 75, TRUE);
  jpeg_set_colorspace(&c, o.stored);
  if (!four) {
    c.comp_info[0].h_samp_factor = o.h_samp;
    c.comp_info[0].v_samp_factor = o.v_samp;
  }
  c.restart_in_rows = o.restart_rows;
  c.arith_code = o.arithmetic ? TRUE : FALSE;
  c.optimize_coding = o.optimize ? TRUE : FALSE;
  jpeg_start_compress(&c, TRUE);
  const int stride = width * c.input_components;
  while (c.next_scanline < c.image_height) {
    JSAMPROW row = pixels.data() + static_cast<size_t>(c.next_scanline) * stride;
    jpeg_write_scanlines(&c, &row, 1);
  }
  jpeg_finish_compress(&c);
  jpeg_destroy_compress(&c);
  std::vector<uint8_t> out(buffer, buffer + size);
  std::free(buffer);
  return out;
}

void synthetic_jpegs(const fs::path& dir) {
  const std::pair<int, int> sizes[] = {{16, 16}, {33, 17}, {64, 48}};
  for (const char* sub : {"4:4:4", "4:2:2", "4:2:0", "4:4:0", "gray"}) {
    for (bool progressive : {false, true}) {
      for (auto [w, h] : sizes) {
        const auto rgb = render_synthetic_rgb(w, h, static_cast<uint64_t>(w * h));
        std::string name = std::string("syn_") + sub + (progressive ? "_prog_" : "_base_") +
                           std::to_string(w) + "x" + std::to_string(h) + ".jpg";
        for (char& ch : name) ch = ch == ':' ? '-' : ch;
        write(dir / name, encode_jpeg(rgb.data(), w, h, 75, sub, progressive));
      }
    }
  }
  // Panorama-like strips: the resize paths' extreme aspect ratios (issue 15 defect 2).
  for (auto [w, h] : {std::pair{1000, 1}, std::pair{1, 1000}}) {
    const auto rgb = render_synthetic_rgb(w, h, 3);
    write(dir / ("strip_" + std::to_string(w) + "x" + std::to_string(h) + ".jpg"),
          encode_jpeg(rgb.data(), w, h, 75, "4:4:4", false));
  }
}

void libjpeg_jpegs(const fs::path& dir) {
  write(dir / "lj_cmyk.jpg", libjpeg_encode(24, 16, {.stored = JCS_CMYK}));
  write(dir / "lj_ycck.jpg", libjpeg_encode(24, 16, {.stored = JCS_YCCK}));
  write(dir / "lj_411.jpg", libjpeg_encode(40, 16, {.h_samp = 4, .v_samp = 1}));
  write(dir / "lj_restart.jpg", libjpeg_encode(40, 40, {.restart_rows = 1}));
  write(dir / "lj_arith.jpg", libjpeg_encode(32, 24, {.arithmetic = true}));
  write(dir / "lj_optimized.jpg", libjpeg_encode(32, 24, {.optimize = true}));
}

void opencv_images(const fs::path& dir) {
  const int w = 16, h = 12;
  const auto rgb = render_synthetic_rgb(w, h, 9);
  cv::Mat bgr(h, w, CV_8UC3);
  for (size_t i = 0; i < rgb.size(); i += 3) {
    bgr.data[i] = rgb[i + 2];
    bgr.data[i + 1] = rgb[i + 1];
    bgr.data[i + 2] = rgb[i];
  }
  cv::Mat gray;
  cv::extractChannel(bgr, gray, 1);
  const std::pair<const char*, const cv::Mat*> images[] = {
      {".png", &bgr}, {".bmp", &bgr}, {".ppm", &bgr}, {".pgm", &gray},
      {".tiff", &bgr}, {".webp", &bgr}};
  for (auto [ext, mat] : images) {
    if (!cv::haveImageWriter(ext)) {
      std::fprintf(stderr, "make_seed_corpus: OpenCV cannot write %s, no seed of it\n", ext);
      continue;
    }
    std::vector<uint8_t> bytes;
    cv::imencode(ext, *mat, bytes);
    write(dir / (std::string("cv") + ext), bytes);
  }
}

/// The 4 smallest .jpg files under 48 KiB below `root` (real photos), by (size, path).
void photo_jpegs(const fs::path& root, const fs::path& dir) {
  std::set<std::pair<uintmax_t, fs::path>> found;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (e.is_regular_file() && e.path().extension() == ".jpg" && e.file_size() < 48 * 1024)
      found.emplace(e.file_size(), e.path());
  }
  int n = 0;
  for (const auto& [size, path] : found) {
    if (n == 4) break;
    fs::copy_file(path, dir / ("photo_" + std::to_string(n++) + ".jpg"),
                  fs::copy_options::overwrite_existing);
  }
  std::fprintf(stderr, "make_seed_corpus: %d photos from %s\n", n, root.c_str());
}

// --------------------------------------------------------------------------- specs

/// One spec that places `op` where its stage allows, with `params` (a YAML map or "").
std::string spec_for(const OpSchema& op, const std::string& params) {
  const std::string item = params.empty() ? op.name : "{" + op.name + ": " + params + "}";
  switch (op.stage) {
    case OpStage::kDecode:
      return "[" + item + ", {center_crop: {size: 32}}, normalize]";
    case OpStage::kImage:
      return "[decode, {resize: {size: 40}}, " + item + ", {center_crop: {size: 32}}, normalize]";
    case OpStage::kTensor:
    case OpStage::kBatch:
      return "[decode, {center_crop: {size: 32}}, normalize, " + item + "]";
  }
  return item;
}

void specs(const fs::path& dir) {
  for (const auto& name : recipe_names()) write(dir / (name + ".yaml"), recipe_text(name));
  write(dir / "readme_example.yaml",
        std::string("name: my_pipeline\ndecode: {mode: auto}\ntransforms:\n"
                    "  - random_resized_crop: {size: 176}\n  - horizontal_flip\n"
                    "  - trivial_augment_wide: {}\n  - normalize: {mean: imagenet, std: imagenet}\n"
                    "  - random_erasing: {p: 0.1}\nbatch:\n"
                    "  - mixup_cutmix: {mixup_alpha: 0.2, cutmix_alpha: 1.0}\n"
                    "  - label_smoothing: {smoothing: 0.1}\n"));
  write(dir / "one_line.yaml",
        std::string("[decode, {random_resized_crop: {size: 176}}, horizontal_flip, normalize]"));
  write(dir / "finish_on_device.yaml",  // uint8 NHWC, flip and mixing left to the device
        std::string("transforms: [random_resized_crop, horizontal_flip, normalize]\n"
                    "collate: {dtype: uint8, layout: NHWC, finish: device}\n"
                    "batch: [cutmix, {mixup_cutmix: {mixup_alpha: 0.8, cutmix_alpha: 1.0}}, label_smoothing]\n"));
  for (const auto& op : OpRegistry::instance().all()) {
    write(dir / ("op_" + op.name + ".yaml"), spec_for(op, ""));
    int k = 0;
    for (const auto& example : op.bench_examples)
      write(dir / ("op_" + op.name + "_" + std::to_string(k++) + ".yaml"), spec_for(op, example));
  }
}

void spec_dictionary(const fs::path& path) {
  std::set<std::string> words = {"name",   "decode", "transforms", "batch",   "collate",
                                 "variants", "mode", "full",       "scaled",  "roi",
                                 "auto",   "dtype",  "float32",    "layout",  "NCHW",
                                 "recipe", "fixes",  "imagenet",   "true",    "false",
                                 "finish", "host",   "device",     "uint8",   "NHWC"};
  for (const auto& op : OpRegistry::instance().all()) {
    words.insert(op.name);
    for (const auto& p : op.params) {
      words.insert(p.name);
      for (const auto& c : p.choices) words.insert(c);
    }
  }
  std::string text = "# spec keys, operators, parameters and choices (make_seed_corpus)\n";
  for (const auto& w : words) text += "\"" + w + "\"\n";
  write(path, text);
}

// --------------------------------------------------------------------------- JSON runs

json row(const std::string& name, json fields) {
  fields["name"] = name;
  fields["run_name"] = name;
  fields["run_type"] = "iteration";
  fields["time_unit"] = "ms";
  return fields;
}

void json_runs(const fs::path& dir) {
  const json context = {{"recipe", "imagenet_train"}, {"baseline", "emulated"},
                        {"batch_size", "16"},          {"hardware_threads", "2"},
                        {"dataset", "data/photos-in"}, {"crop_size", "224"},
                        {"pipeline_spec", recipe_spec("imagenet_train").to_yaml()}};
  json rows = json::array();
  for (int w : {1, 2}) {
    const double data = 40.0 / w;
    rows.push_back(row("BM_EndToEnd/imagenet_train/emulated/workers:" + std::to_string(w) +
                           "/iterations:4/real_time",
                       {{"real_time", data + 1}, {"cpu_time", 1.0}, {"workers", w},
                        {"data_ms", data}, {"compute_ms", 25.0}, {"step_ms", data + 1},
                        {"worker_wait_ms", 0.5}, {"items_per_second", 16000.0 / (data + 1)}}));
    rows.push_back(row("BM_Loader/imagenet_train/workers:" + std::to_string(w) +
                           "/iterations:4/real_time",
                       {{"real_time", data}, {"workers", w}, {"data_ms", data},
                        {"items_per_second", 16000.0 / data}, {"read_ms", 0.02},
                        {"decode_ms", 1.6}, {"transform_ms", 0.7}, {"collate_ms", 0.01}}));
  }
  rows.push_back(row("BM_Sample/imagenet_train/real_time", {{"items_per_second", 400.0}}));
  rows.push_back(row("BM_Sample/imagenet_train_roi/real_time", {{"items_per_second", 700.0}}));
  write(dir / "sweep.json", json{{"context", context}, {"benchmarks", rows}}.dump(1));

  json reps = json::array();
  for (int r = 0; r < 3; ++r) {
    json it = row("BM_Decode/turbo_full", {{"real_time", 2.0 + r}, {"cpu_time", 2.0},
                                           {"repetition_index", r}, {"items_per_second", 500.0}});
    reps.push_back(it);
  }
  json mean = row("BM_Decode/turbo_full_mean", {{"real_time", 3.0}});
  mean["run_type"] = "aggregate";
  mean["aggregate_name"] = "mean";
  reps.push_back(mean);
  json errored = row("BM_H2D/bytes:1048576/manual_time", {{"real_time", 0.0}});
  errored["error_occurred"] = true;
  errored["error_message"] = "no CUDA device";
  reps.push_back(errored);
  write(dir / "repetitions.json", json{{"context", {{"recipe", "imagenet_train"}}}, {"benchmarks", reps}}.dump());
  write(dir / "minimal.json", std::string(R"({"benchmarks": []})"));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 && !(argc == 4 && std::strcmp(argv[2], "--photos") == 0)) {
    std::fprintf(stderr, "usage: make_seed_corpus OUT_DIR [--photos DIR]\n");
    return 2;
  }
  try {
    const fs::path out = argv[1];
    for (const char* sub : {"images", "spec", "json"}) fs::create_directories(out / sub);
    synthetic_jpegs(out / "images");
    libjpeg_jpegs(out / "images");
    opencv_images(out / "images");
    if (argc == 4 && fs::is_directory(argv[3])) photo_jpegs(argv[3], out / "images");
    specs(out / "spec");
    spec_dictionary(out / "spec.dict");
    json_runs(out / "json");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "make_seed_corpus: %s\n", e.what());
    return 1;
  }
  return 0;
}
