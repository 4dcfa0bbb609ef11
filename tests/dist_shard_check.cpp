// Run under mpirun (tests/scripts/mpi_test.py): every sample of DATA is delivered exactly
// once across the ranks in each epoch, and the ranks' shards are disjoint. Each rank runs a
// real Loader over its shard (rank and world from pipeline/dist/, as bench/run/loader_util.cpp
// builds it), collects the dataset indices of every batch it is delivered, and rank 0
// checks the union against the dataset's own size (ImageFolder, an independent count).
// Usage: dist_shard_check DATA [EPOCHS]. Exit 0 when the checks hold, 1 with a message
// naming the first index that breaks them, 2 on bad usage.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "datasets/image_folder.h"
#include "pipeline/dist/dist.h"
#include "pipeline/loader.h"
#include "transforms/recipes.h"

namespace dist = pipebench::dist;

int main(int argc, char** argv) {
  const dist::Session mpi(&argc, &argv);
  if (argc < 2) {
    std::fprintf(stderr, "usage: dist_shard_check DATA [EPOCHS]\n");
    return 2;
  }
  const int epochs = argc > 2 ? std::atoi(argv[2]) : 2;
  const pipebench::ImageFolder dataset(argv[1]);
  pipebench::LoaderOptions o;
  o.pipeline = pipebench::build_recipe("imagenet_train", 32);
  o.batch_size = 5;  // does not divide the shards: short last batches are delivered too
  o.workers = 2;
  o.epochs = epochs;
  o.sampler.shuffle = true;
  o.sampler.seed = 7;
  o.sampler.drop_last = false;
  o.sampler.rank = dist::rank();
  o.sampler.world_size = dist::world_size();
  // Per epoch: the dataset indices this rank was delivered, as (epoch, index) pairs.
  std::vector<double> mine;
  {
    pipebench::Loader loader(dataset, o);
    while (auto b = loader.next()) {
      for (int64_t i : (*b)->sample_indices) {
        mine.push_back((*b)->epoch);
        mine.push_back(static_cast<double>(i));
      }
    }
  }
  const auto all = dist::gather(mine);
  if (dist::rank() != 0) return 0;
  int rc = 0;
  const size_t n = dataset.size();
  for (int e = 0; e < epochs; ++e) {
    std::map<int64_t, int> owner;  // index -> rank that was delivered it
    size_t delivered = 0;
    for (size_t r = 0; r < all.size(); ++r) {
      for (size_t k = 0; k + 1 < all[r].size(); k += 2) {
        if (static_cast<int>(all[r][k]) != e) continue;
        const auto index = static_cast<int64_t>(std::llround(all[r][k + 1]));
        ++delivered;
        if (index < 0 || static_cast<size_t>(index) >= n) {
          std::fprintf(stderr, "epoch %d: rank %zu was delivered index %lld outside [0, %zu)\n",
                       e, r, static_cast<long long>(index), n);
          rc = 1;
        } else if (auto [it, fresh] = owner.emplace(index, static_cast<int>(r)); !fresh) {
          std::fprintf(stderr, "epoch %d: index %lld delivered twice (ranks %d and %zu)\n", e,
                       static_cast<long long>(index), it->second, r);
          rc = 1;
        }
      }
    }
    if (delivered != n || owner.size() != n) {
      std::fprintf(stderr, "epoch %d: %zu samples delivered, %zu distinct, over a dataset of %zu\n",
                   e, delivered, owner.size(), n);
      rc = 1;
    }
    std::map<int, size_t> per_rank;
    for (const auto& [index, r] : owner) ++per_rank[r];
    std::printf("epoch %d: %zu samples over %zu ranks (", e, delivered, all.size());
    for (const auto& [r, count] : per_rank) std::printf("%srank %d: %zu", r ? ", " : "", r, count);
    std::printf(")\n");
  }
  std::printf("%s\n", rc == 0 ? "every sample exactly once per epoch, shards disjoint" : "FAILED");
  return rc;
}
