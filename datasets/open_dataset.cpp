// open_dataset: ShardSet for a folder of tar shards, ImageFolder otherwise (open_dataset.h).
#include "datasets/open_dataset.h"

#include "datasets/image_folder.h"
#include "datasets/shard_set.h"

namespace pipebench {
namespace {

namespace fs = std::filesystem;

struct DirContents {
  size_t tars = 0, subdirs = 0;
};

DirContents survey(const fs::path& dir) {
  DirContents c;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code e2;
    if (it->is_directory(e2))
      ++c.subdirs;
    else if (it->path().extension() == ".tar" && it->is_regular_file(e2))
      ++c.tars;
  }
  if (ec) throw DatasetError(dir.string() + ": cannot list: " + ec.message());
  return c;
}

}  // namespace

bool is_shard_dir(const fs::path& path) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) return path.extension() == ".tar";
  if (!fs::is_directory(path, ec)) return false;
  const DirContents c = survey(path);
  return c.tars > 0 && c.subdirs == 0;
}

std::unique_ptr<SampleSource> open_dataset(const fs::path& path, bool skip_bad) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw DatasetError(path.string() + ": does not exist");
  if (is_shard_dir(path)) return std::make_unique<ShardSet>(path, skip_bad);
  if (fs::is_directory(path, ec) && survey(path).subdirs == 0)
    throw DatasetError(path.string() +
                       ": neither an ImageFolder tree (no class sub-directory) nor a shard set "
                       "(no *.tar file)");
  return std::make_unique<ImageFolder>(path);
}

}  // namespace pipebench
