// The pool of large scratch blocks (scratch_pool.h).
#include "engine/scratch_pool.h"

#include <algorithm>
#include <mutex>
#include <vector>

namespace tagwire::engine {

namespace {

struct Kept {
  unsigned char* block;
  std::size_t size;
};

struct Pool {
  std::mutex mutex;
  std::vector<Kept> kept;  // oldest first
  std::size_t bytes = 0;
};

// Never destroyed: a nonblocking collective's schedule may outlive static
// destruction at exit; the blocks it holds go with the process.
Pool& pool() {
  static Pool* p = new Pool;
  return *p;
}

// Sizes pooled blocks are made in, so that calls of nearly the same size
// share them.
std::size_t rounded(std::size_t bytes) {
  constexpr std::size_t kGrain = std::size_t{64} << 10;
  return (bytes + kGrain - 1) / kGrain * kGrain;
}

}  // namespace

void ScratchPool::GiveBack::operator()(unsigned char* block) const {
  if (block == nullptr) return;
  if (size < kPooledFrom || size > kKeptBytes) {
    delete[] block;
    return;
  }
  std::vector<unsigned char*> freed;
  {
    Pool& p = pool();
    std::lock_guard lock(p.mutex);
    while (!p.kept.empty() && (p.bytes + size > kKeptBytes || p.kept.size() + 1 > kKeptBlocks)) {
      freed.push_back(p.kept.front().block);
      p.bytes -= p.kept.front().size;
      p.kept.erase(p.kept.begin());
    }
    p.kept.push_back({block, size});
    p.bytes += size;
  }
  for (unsigned char* f : freed) delete[] f;
}

ScratchPool::Block ScratchPool::take(std::size_t bytes) {
  if (bytes < kPooledFrom) {
    return Block(new unsigned char[std::max<std::size_t>(bytes, 1)], GiveBack{bytes});
  }
  {
    Pool& p = pool();
    std::lock_guard lock(p.mutex);
    auto best = p.kept.end();
    for (auto it = p.kept.begin(); it != p.kept.end(); ++it) {
      if (it->size >= bytes && (best == p.kept.end() || it->size < best->size)) best = it;
    }
    if (best != p.kept.end()) {
      Kept k = *best;
      p.kept.erase(best);
      p.bytes -= k.size;
      return Block(k.block, GiveBack{k.size});
    }
  }
  const std::size_t size = rounded(bytes);
  return Block(new unsigned char[size], GiveBack{size});
}

std::size_t ScratchPool::kept_bytes() {
  Pool& p = pool();
  std::lock_guard lock(p.mutex);
  return p.bytes;
}

std::size_t ScratchPool::kept_blocks() {
  Pool& p = pool();
  std::lock_guard lock(p.mutex);
  return p.kept.size();
}

void ScratchPool::clear() {
  std::vector<Kept> all;
  {
    Pool& p = pool();
    std::lock_guard lock(p.mutex);
    all.swap(p.kept);
    p.bytes = 0;
  }
  for (const Kept& k : all) delete[] k.block;
}

}  // namespace tagwire::engine
