// The registration cache's bookkeeping with a counting stand-in for
// ibv_reg_mr, and the memory hooks with real munmap / mremap / madvise:
// runs on any machine. (The cache on a device, with real rendezvous from
// freed and remapped buffers, is tests/mpi/rcache.c in the soft-RoCE VM.)
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "verbs/memory_hooks.h"
#include "verbs/registration_cache.h"

namespace tagwire::verbs {
namespace {

struct Ledger {
  int registered = 0;
  int deregistered = 0;
  std::set<std::uint32_t> live;
  std::uint32_t next_key = 1;
};

class FakeRegion final : public CachedRegion {
 public:
  FakeRegion(Ledger* l, std::uint32_t key) : ledger_(l), key_(key) { l->live.insert(key); }
  ~FakeRegion() override {
    ++ledger_->deregistered;
    ledger_->live.erase(key_);
  }
  std::uint32_t lkey() const override { return key_; }
  std::uint32_t rkey() const override { return key_ + 1000; }

 private:
  Ledger* ledger_;
  std::uint32_t key_;
};

RegistrationCache make_cache(Ledger* l, std::size_t max_bytes = std::size_t{1} << 30) {
  return RegistrationCache(
      [l](std::uintptr_t start, std::size_t length) -> Result<std::unique_ptr<CachedRegion>> {
        EXPECT_EQ(start % 4096, 0u);
        EXPECT_EQ(length % 4096, 0u);
        ++l->registered;
        return std::unique_ptr<CachedRegion>(new FakeRegion(l, l->next_key++));
      },
      max_bytes);
}

const void* at(std::uintptr_t a) {
  return reinterpret_cast<const void*>(a);
}

TEST(RegistrationCache, ASecondUseOfTheSameBufferIsAHit) {
  Ledger l;
  auto cache = make_cache(&l);
  auto a = cache.acquire(at(0x10000), 10000);
  ASSERT_TRUE(a.is_ok());
  const std::uint32_t key = RegistrationCache::lkey(*a);
  cache.release(*a);
  auto b = cache.acquire(at(0x10000), 10000);
  ASSERT_TRUE(b.is_ok());
  EXPECT_EQ(RegistrationCache::lkey(*b), key);
  // A range inside the registered pages is a hit too.
  auto c = cache.acquire(at(0x10100), 100);
  ASSERT_TRUE(c.is_ok());
  EXPECT_EQ(RegistrationCache::lkey(*c), key);
  cache.release(*b);
  cache.release(*c);
  EXPECT_EQ(l.registered, 1);
  EXPECT_EQ(cache.stats().hits, 2u);
  EXPECT_EQ(cache.stats().misses, 1u);
  // A range reaching past the registration is not.
  auto d = cache.acquire(at(0x10000), 5 * 4096);
  ASSERT_TRUE(d.is_ok());
  EXPECT_NE(RegistrationCache::lkey(*d), key);
  cache.release(*d);
  EXPECT_EQ(l.registered, 2);
}

TEST(RegistrationCache, InvalidatedMemoryIsRegisteredAfresh) {
  Ledger l;
  auto cache = make_cache(&l);
  auto a = cache.acquire(at(0x20000), 8192);
  const std::uint32_t key = RegistrationCache::lkey(*a);
  cache.release(*a);
  cache.invalidate(0x21000, 4096);  // the second page goes
  EXPECT_EQ(l.deregistered, 0) << "deregistered on the engine's thread, not in the hook";
  auto b = cache.acquire(at(0x20000), 100);  // the first page: still the old entry? No: it is gone
  ASSERT_TRUE(b.is_ok());
  EXPECT_NE(RegistrationCache::lkey(*b), key);
  EXPECT_EQ(l.deregistered, 1);
  EXPECT_EQ(l.live.count(key), 0u);
  cache.release(*b);
  EXPECT_EQ(cache.stats().invalidated, 1u);
  // A range that does not overlap leaves entries alone.
  cache.invalidate(0x30000, 4096);
  auto c = cache.acquire(at(0x20000), 100);
  EXPECT_EQ(RegistrationCache::lkey(*c), RegistrationCache::lkey(*b));
  cache.release(*c);
}

// More reports between two uses than the cache keeps: it cannot tell
// which entries they touched, so it drops all of them.
TEST(RegistrationCache, MoreReportsThanItKeepsDropEveryEntry) {
  Ledger l;
  auto cache = make_cache(&l);
  cache.release(*cache.acquire(at(0x20000), 4096));
  cache.release(*cache.acquire(at(0x40000), 4096));
  for (std::uintptr_t i = 0; i < 1000; ++i) cache.invalidate(0x100000 + i * 8192, 4096);
  EXPECT_EQ(l.deregistered, 0) << "deregistered inside the hook";
  cache.release(*cache.acquire(at(0x20000), 4096));
  EXPECT_EQ(l.registered, 3) << "an entry survived reports that could have touched it";
  EXPECT_EQ(cache.stats().invalidated, 2u);
  // Fewer reports, none overlapping: the entries stay.
  for (std::uintptr_t i = 0; i < 10; ++i) cache.invalidate(0x100000 + i * 8192, 4096);
  cache.release(*cache.acquire(at(0x20000), 4096));
  EXPECT_EQ(l.registered, 3);
}

// Reports arrive on other threads than the cache's user, and never wait
// for the cache (see TheCacheRegistersWhileAnotherThreadUnmaps): one thread
// reports ranges that cover the other's entries while that one acquires
// and releases. Every entry reported before an acquire is registered
// afresh, and the ledger balances at the end.
TEST(RegistrationCache, ReportsFromAnotherThreadWhileRegistering) {
  Ledger l;
  auto cache = make_cache(&l, 64 * 4096);
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> reports{0};
  std::thread reporter([&] {
    for (std::uintptr_t i = 0; !stop.load(); ++i) {
      cache.invalidate(0x100000 + (i % 256) * 4096, 4096);
      reports.fetch_add(1);
    }
  });
  // The two must overlap: on a loaded machine the reporter may not be
  // scheduled before 20,000 acquires are over (a CI run saw 0 reports),
  // so the loop also runs until the reporter has made its 1,000th report.
  for (std::uintptr_t i = 0; i < 20000 || reports.load() < 1000; ++i) {
    auto e = cache.acquire(at(0x100000 + (i % 256) * 4096), 100);
    ASSERT_TRUE(e.is_ok());
    cache.release(*e);
  }
  stop = true;
  reporter.join();
  // Quiet now: a kept entry is a hit, and after a report it is not.
  cache.release(*cache.acquire(at(0x100000), 100));
  const std::uint32_t kept = l.next_key;
  cache.release(*cache.acquire(at(0x100000), 100));
  ASSERT_EQ(l.next_key, kept) << "the entry was not kept";
  cache.invalidate(0x100000, 4096);
  cache.release(*cache.acquire(at(0x100000), 100));
  EXPECT_EQ(l.next_key, kept + 1) << "a reported entry was handed out again";
  const RegistrationCacheStats st = cache.stats();
  EXPECT_GE(reports.load(), 1000u);
  EXPECT_GT(st.invalidated, 0u);
  EXPECT_EQ(static_cast<int>(l.live.size()), l.registered - l.deregistered);
  EXPECT_EQ(static_cast<std::uint64_t>(l.live.size()), st.entries);
}

TEST(RegistrationCache, AnEntryInUseIsDeregisteredOnlyWhenReleased) {
  Ledger l;
  auto cache = make_cache(&l);
  auto a = cache.acquire(at(0x40000), 4096);
  cache.invalidate(0x40000, 4096);
  auto b = cache.acquire(at(0x50000), 4096);  // collects: but `a` is in use
  EXPECT_EQ(l.deregistered, 0);
  EXPECT_EQ(RegistrationCache::lkey(*a), 1u) << "the key stays usable while in use";
  cache.release(*a);
  EXPECT_EQ(l.deregistered, 1);
  cache.release(*b);
  EXPECT_EQ(cache.stats().entries, 1u);
}

TEST(RegistrationCache, TheBudgetEvictsTheLeastRecentlyUsedUnusedEntries) {
  Ledger l;
  auto cache = make_cache(&l, 3 * 4096);
  std::vector<RegistrationCache::Entry*> held;
  for (std::uintptr_t i = 0; i < 3; ++i) {
    auto e = cache.acquire(at(0x100000 + i * 0x10000), 4096);
    cache.release(*e);
  }
  // Touch the first again: the second is now the oldest.
  cache.release(*cache.acquire(at(0x100000), 10));
  auto in_use = cache.acquire(at(0x200000), 4096);  // over budget by one page
  EXPECT_EQ(cache.stats().evicted, 1u);
  EXPECT_EQ(cache.stats().bytes, 3u * 4096);
  const int before = l.registered;
  cache.release(*cache.acquire(at(0x100000), 10));  // kept
  cache.release(*cache.acquire(at(0x120000), 10));  // kept
  EXPECT_EQ(l.registered, before);
  cache.release(*cache.acquire(at(0x110000), 10));  // evicted: registered again
  EXPECT_EQ(l.registered, before + 1);
  cache.release(*in_use);
}

TEST(RegistrationCache, AFailedRegistrationIsReturnedAndNotCached) {
  int calls = 0;
  RegistrationCache cache(
      [&calls](std::uintptr_t, std::size_t) -> Result<std::unique_ptr<CachedRegion>> {
        ++calls;
        return Status(ErrorCode::kTransport, "ibv_reg_mr: Bad address");
      },
      1 << 20);
  auto a = cache.acquire(at(0x1000), 10);
  ASSERT_FALSE(a.is_ok());
  EXPECT_EQ(a.status().code(), ErrorCode::kTransport);
  EXPECT_FALSE(cache.acquire(at(0x1000), 10).is_ok());
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(cache.stats().entries, 0u);
}

// The hooks themselves: this binary links the library's munmap, mremap and
// madvise, so these calls go through them.
struct Seen {
  std::vector<std::pair<std::uintptr_t, std::size_t>> ranges;
};
void record(void* ctx, std::uintptr_t start, std::size_t length) {
  static_cast<Seen*>(ctx)->ranges.emplace_back(start, length);
}

// The real hooks are libucm's, and under ThreadSanitizer libucm's madvise
// interception crashes in TSan's rwlock interceptor when a thread exits
// (ucm_event_enter from glibc's advise_stack_range); CI's TSan stage also
// turns UCX's memory events off, so no handler can be set at all. There
// the cache's locking is judged by ReportsFromAnotherThreadWhileRegistering.
#if defined(__SANITIZE_THREAD__)
constexpr bool kThreadSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
constexpr bool kThreadSanitizer = true;
#else
constexpr bool kThreadSanitizer = false;
#endif
#else
constexpr bool kThreadSanitizer = false;
#endif

class MemoryHooks : public ::testing::Test {
 protected:
  void SetUp() override {
    if (kThreadSanitizer) {
      GTEST_SKIP() << "libucm's memory hooks do not run under ThreadSanitizer (it crashes "
                      "in libucm's madvise hook at thread exit); the ASan and plain builds "
                      "run these";
    }
  }
};

TEST_F(MemoryHooks, UnmapRemapAndDontneedAreSeenBeforeTheyHappen) {
  Seen seen;
  ASSERT_TRUE(add_unmap_listener(&record, &seen));
  const std::size_t page = 4096;
  void* a = mmap(nullptr, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(a, MAP_FAILED);
  const auto base = reinterpret_cast<std::uintptr_t>(a);
  ASSERT_EQ(madvise(static_cast<char*>(a) + page, page, MADV_DONTNEED), 0);
  ASSERT_EQ(madvise(a, page, MADV_WILLNEED), 0);  // keeps the pages: not reported
  void* b = mremap(a, 4 * page, 2 * page, 0);     // shrinks in place
  ASSERT_EQ(b, a);
  ASSERT_EQ(munmap(b, 2 * page), 0);
  remove_unmap_listener(&seen);
  void* c = mmap(nullptr, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_EQ(munmap(c, page), 0);  // no listener: not recorded
  ASSERT_EQ(seen.ranges.size(), 3u);
  EXPECT_EQ(seen.ranges[0], std::make_pair(base + page, page));
  EXPECT_EQ(seen.ranges[1], std::make_pair(base, 4 * page));
  EXPECT_EQ(seen.ranges[2], std::make_pair(base, 2 * page));
}

TEST_F(MemoryHooks, TheCacheForgetsMemoryThatWasUnmapped) {
  Ledger l;
  auto cache = make_cache(&l);
  ASSERT_TRUE(add_unmap_listener(
      [](void* ctx, std::uintptr_t s, std::size_t n) {
        static_cast<RegistrationCache*>(ctx)->invalidate(s, n);
      },
      &cache));
  const std::size_t len = 1 << 20;
  void* a = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(a, MAP_FAILED);
  cache.release(*cache.acquire(a, len));
  ASSERT_EQ(munmap(a, len), 0);
  // The same addresses, new pages: must be registered again.
  void* b = mmap(a, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  ASSERT_EQ(b, a);
  cache.release(*cache.acquire(b, len));
  EXPECT_EQ(l.registered, 2);
  EXPECT_EQ(cache.stats().invalidated, 1u);
  ASSERT_EQ(munmap(b, len), 0);
  remove_unmap_listener(&cache);
}

// Another thread mapping and unmapping a page in a loop until destroyed.
class Unmapper {
 public:
  Unmapper()
      : thread_([this] {
          while (!stop_.load()) {
            void* a =
                mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (a == MAP_FAILED || munmap(a, 4096) != 0) break;
            unmaps_.fetch_add(1);
          }
        }) {}
  ~Unmapper() { stop(); }
  Unmapper(const Unmapper&) = delete;
  Unmapper& operator=(const Unmapper&) = delete;
  // Joins the thread; then how many pages it unmapped.
  std::uint64_t stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    return unmaps_.load();
  }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> unmaps_{0};
  std::thread thread_;
};

// A deadlock leaves threads that cannot be joined: say which and end the
// run loudly instead of hanging until meson's timeout.
template <typename T>
T result_or_abort(std::future<T>& f, const char* deadlock) {
  if (f.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
    std::fprintf(stderr, "MemoryHooks: %s deadlocked\n", deadlock);
    std::abort();
  }
  return f.get();
}

// A transport finalizing (its listener removed) while another thread
// unmaps: libucm holds its handler lock while it reports the unmapping,
// and the report takes the listener registry's lock, so the registry must
// never call into libucm under its own lock (it did: removing the last
// listener unset the handler there, and two ranks' threads finalizing
// together hung in the soft-RoCE VM about once in ten runs).
TEST_F(MemoryHooks, ListenersComeAndGoWhileAnotherThreadUnmaps) {
  std::atomic<std::uint64_t> seen{0};
  Unmapper unmapper;
  auto churn = std::async(std::launch::async, [&] {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    int rounds = 0;
    while (std::chrono::steady_clock::now() < until) {
      if (!add_unmap_listener(
              [](void* ctx, std::uintptr_t, std::size_t) {
                static_cast<std::atomic<std::uint64_t>*>(ctx)->fetch_add(1);
              },
              &seen)) {
        return -1;
      }
      std::this_thread::yield();
      remove_unmap_listener(&seen);
      ++rounds;
    }
    return rounds;
  });
  const int rounds = result_or_abort(churn, "adding and removing listeners against munmap");
  EXPECT_GT(unmapper.stop(), 0u) << "the other thread's mmap/munmap failed";
  ASSERT_GT(rounds, 0) << "a listener could not be added";
  EXPECT_GT(seen.load(), 0u) << "no unmapping was reported while a listener was in";
}

// The cache's own lock against the registry's: a registration (or a
// deregistration) may unmap memory while the cache holds its lock, which
// reaches the registry's lock through the hook, while another thread's
// unmapping holds the registry's lock and reports into the cache. A report
// must therefore never wait for the cache's lock.
TEST_F(MemoryHooks, TheCacheRegistersWhileAnotherThreadUnmaps) {
  Ledger l;
  const std::size_t page = 4096;
  RegistrationCache cache(
      [&l, page](std::uintptr_t, std::size_t) -> Result<std::unique_ptr<CachedRegion>> {
        // As a driver may: scratch memory mapped and unmapped inside.
        void* scratch =
            mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (scratch != MAP_FAILED) munmap(scratch, page);
        ++l.registered;
        return std::unique_ptr<CachedRegion>(new FakeRegion(&l, l.next_key++));
      },
      16 * page);
  ASSERT_TRUE(add_unmap_listener(
      [](void* ctx, std::uintptr_t s, std::size_t n) {
        static_cast<RegistrationCache*>(ctx)->invalidate(s, n);
      },
      &cache));
  Unmapper unmapper;
  auto registering = std::async(std::launch::async, [&] {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    std::uint64_t misses = 0;
    // Addresses nobody maps (the cache never touches them): every
    // acquire of a new one registers, and the budget keeps evicting.
    for (std::uintptr_t i = 0; std::chrono::steady_clock::now() < until; ++i) {
      auto e = cache.acquire(at(0x7e0000000000 + (i % 4096) * 2 * page), page);
      if (!e) return std::uint64_t{0};
      cache.release(*e);
      misses = cache.stats().misses;
    }
    return misses;
  });
  const std::uint64_t misses = result_or_abort(registering, "the cache's lock and the registry's");
  EXPECT_GT(unmapper.stop(), 0u) << "the other thread's mmap/munmap failed";
  remove_unmap_listener(&cache);
  EXPECT_GT(misses, 0u) << "nothing was registered";
  EXPECT_EQ(static_cast<int>(l.live.size()), l.registered - l.deregistered);
}

}  // namespace
}  // namespace tagwire::verbs
