#include "bench/run/file_header.h"

#include <exception>
#include <fstream>
#include <string>
#include <vector>

#include "transforms/image_format.h"

namespace pipebench::bench {
namespace {

// What sets a decode's cost per pixel besides the pixels (model/cost_fit.h).
std::string header_class(const ImageInfo& info) {
  std::string k = format_name(info.format);
  if (info.format == ImageFormat::kJpeg)
    k += std::string(info.jpeg.progressive ? "/progressive/" : "/baseline/") + info.jpeg.subsampling;
  return k;
}

}  // namespace

std::optional<model::FileHeader> read_file_header(const ImageFolder& folder, std::size_t i) {
  const std::filesystem::path& path = folder.sample(i).path;
  std::vector<uint8_t> head(kHeadBytes);
  {
    std::ifstream f(path, std::ios::binary);
    if (!f) return std::nullopt;
    f.read(reinterpret_cast<char*>(head.data()), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<std::size_t>(f.gcount()));
  }
  ImageInfo info;
  try {
    info = read_image_info(head, path.string());
  } catch (const std::exception&) {
    if (head.size() < kHeadBytes) return std::nullopt;  // that was the whole file
    try {
      std::vector<uint8_t> all;
      folder.read(i, all);
      info = read_image_info(all, path.string());
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  model::FileHeader h;
  h.megapixels = static_cast<double>(info.width) * static_cast<double>(info.height) / 1e6;
  h.klass = header_class(info);
  return h;
}

}  // namespace pipebench::bench
