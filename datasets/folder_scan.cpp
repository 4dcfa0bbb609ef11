// scan_image_folder: torchvision's ImageFolder rules with loops and odd entries reported
// (see folder_scan.h). POSIX stat()/lstat() give what std::filesystem does not: the
// (device, inode) identity that detects a loop, the errno of a failed stat (ELOOP vs
// ENOENT), and the modification time in nanoseconds.
#include "datasets/folder_scan.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>
#include <tuple>
#include <utility>

namespace pipebench {
namespace {

namespace fs = std::filesystem;

struct DirId {
  dev_t dev;
  ino_t ino;
  bool operator==(const DirId&) const = default;
};

// One directory on the current walk's path, so a link back to it is seen as a loop.
struct Ancestor {
  DirId id;
  fs::path path;
};

// What a name refers to, links followed; `error` is set when stat() failed, with the
// reason worded for the ignored list.
struct Stat {
  struct stat st {};
  int err = 0;        // errno of the failed stat()
  std::string error;
  bool is_dir() const { return error.empty() && S_ISDIR(st.st_mode); }
  bool is_file() const { return error.empty() && S_ISREG(st.st_mode); }
};

Stat stat_entry(const fs::path& p) {
  Stat s;
  if (::stat(p.c_str(), &s.st) == 0) return s;
  const int err = s.err = errno;
  struct stat link {};
  const bool is_link = ::lstat(p.c_str(), &link) == 0 && S_ISLNK(link.st_mode);
  std::error_code ec;
  const fs::path target = is_link ? fs::read_symlink(p, ec) : fs::path();
  if (is_link && err == ELOOP) {
    s.error = "symbolic link loop (too many levels of links from -> " + target.string() + ")";
  } else if (is_link && err == ENOENT) {
    s.error = "dangling symbolic link (-> " + target.string() + " does not exist)";
  } else {
    s.error = std::string("cannot stat: ") + std::strerror(err);
  }
  return s;
}

const char* kind_of(const struct stat& st) {
  if (S_ISFIFO(st.st_mode)) return "a fifo";
  if (S_ISSOCK(st.st_mode)) return "a socket";
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) return "a device";
  return "not a regular file";
}

int64_t mtime_ns(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

// A file found below a class, with its sort key: the directory relative to the class
// ("" for the class itself), then the name (sorted(os.walk(...)), then sorted(fnames)).
struct Found {
  std::string dir;
  std::string name;
  SampleEntry entry;
};

class ClassWalker {
 public:
  ClassWalker(const fs::path& class_dir, std::vector<IgnoredEntry>& ignored)
      : class_dir_(class_dir), ignored_(ignored) {}

  std::vector<Found> walk(std::vector<Ancestor> ancestors) {
    visit(class_dir_, "", ancestors);
    std::sort(found_.begin(), found_.end(), [](const Found& a, const Found& b) {
      return std::tie(a.dir, a.name) < std::tie(b.dir, b.name);
    });
    return std::move(found_);
  }

 private:
  void visit(const fs::path& dir, const std::string& rel, std::vector<Ancestor>& ancestors) {
    std::error_code ec;
    fs::directory_iterator it(dir, ec);
    if (ec) {
      ignored_.push_back({dir, "cannot list directory: " + ec.message()});
      return;
    }
    for (const auto& entry : it) {
      const fs::path& p = entry.path();
      const std::string name = p.filename().string();
      const Stat s = stat_entry(p);
      if (!s.error.empty()) {
        ignored_.push_back({p, s.error});
      } else if (s.is_dir()) {
        descend(p, rel.empty() ? name : rel + "/" + name, s.st, ancestors);
      } else if (!has_image_extension(name)) {
        ignored_.push_back({p, "extension not in IMG_EXTENSIONS"});
      } else if (!s.is_file()) {
        ignored_.push_back({p, std::string(kind_of(s.st)) + ", not a regular file"});
      } else {
        found_.push_back({rel, name,
                          SampleEntry{p, 0, static_cast<uint64_t>(s.st.st_size), mtime_ns(s.st)}});
      }
    }
  }

  void descend(const fs::path& p, const std::string& rel, const struct stat& st,
               std::vector<Ancestor>& ancestors) {
    const DirId id{st.st_dev, st.st_ino};
    for (const Ancestor& a : ancestors) {
      if (a.id == id) {
        ignored_.push_back({p, "symbolic link loop: the same directory as its ancestor " +
                                   a.path.string() + " (not followed)"});
        return;
      }
    }
    ancestors.push_back({id, p});
    visit(p, rel, ancestors);
    ancestors.pop_back();
  }

  fs::path class_dir_;
  std::vector<IgnoredEntry>& ignored_;
  std::vector<Found> found_;
};

}  // namespace

bool has_image_extension(std::string_view file_name) {
  std::string lower(file_name);
  for (char& c : lower)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return std::any_of(kImageExtensions.begin(), kImageExtensions.end(),
                     [&](std::string_view ext) { return lower.ends_with(ext); });
}

FolderScan scan_image_folder(const fs::path& root) {
  const Stat root_stat = stat_entry(root);
  if (!root_stat.error.empty()) {
    if (root_stat.err == ENOENT)
      throw DatasetError(root.string() + ": dataset root does not exist");
    throw DatasetError(root.string() + ": dataset root: " + root_stat.error);
  }
  if (!root_stat.is_dir()) throw DatasetError(root.string() + ": dataset root is not a directory");

  FolderScan scan;
  std::error_code ec;
  fs::directory_iterator it(root, ec);
  if (ec) throw DatasetError(root.string() + ": cannot list directory: " + ec.message());
  std::vector<std::pair<std::string, struct stat>> class_dirs;
  for (const auto& entry : it) {
    const Stat s = stat_entry(entry.path());
    if (!s.error.empty()) {
      scan.ignored.push_back({entry.path(), s.error});
    } else if (s.is_dir()) {
      class_dirs.emplace_back(entry.path().filename().string(), s.st);
    } else {
      scan.ignored.push_back({entry.path(), "not a directory: files directly under the root "
                                            "belong to no class"});
    }
  }
  std::sort(class_dirs.begin(), class_dirs.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  scan.class_directories = class_dirs.size();

  const Ancestor root_id{{root_stat.st.st_dev, root_stat.st.st_ino}, root};
  for (const auto& [name, st] : class_dirs) {
    const fs::path dir = root / name;
    if (DirId{st.st_dev, st.st_ino} == root_id.id) {
      scan.ignored.push_back({dir, "symbolic link loop: the dataset root itself (not followed)"});
      continue;
    }
    std::vector<Found> found =
        ClassWalker(dir, scan.ignored).walk({root_id, {{st.st_dev, st.st_ino}, dir}});
    if (found.empty()) {
      scan.ignored.push_back({dir, "class directory with no image file below it: no label "
                                   "(torchvision raises FileNotFoundError here)"});
      continue;
    }
    const auto label = static_cast<int32_t>(scan.classes.size());
    scan.classes.push_back(name);
    for (Found& f : found) {
      f.entry.label = label;
      scan.samples.push_back(std::move(f.entry));
    }
  }
  std::stable_sort(scan.ignored.begin(), scan.ignored.end(),
            [](const IgnoredEntry& a, const IgnoredEntry& b) { return a.path < b.path; });
  return scan;
}

}  // namespace pipebench
