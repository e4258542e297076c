// What the tag-matching book costs the host, per message, next to the plain
// software matcher in the same run:
//   matcher           Matcher: post a receive, its message arrives
//   book/software     NicMatcher with no NIC (soft-RoCE, UCX): the same
//                     pair through the book, every message handled in software
//   book/nic          NicMatcher with a NIC: post (a TAG_ADD goes out),
//                     the ADD completes, the NIC reports its match -- the host
//                     work of one message the NIC matched; the NIC's own
//                     work is not here (no device with tag matching on this
//                     machine)
// After the runs: ns per message, each as a ratio to `matcher`, and the
// book's counters for the last run of each, so a reader sees which path
// each figure took.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <string>

#include "matching/matcher.h"
#include "matching/nic_matcher.h"
#include "ns_reporter.h"

namespace tagwire::matching {
namespace {

const ReceivePattern kPattern{1, 3, 7};
const IncomingMessage kMessage{Envelope{1, 3, 7}, 1, 8, 42};

std::map<std::string, NicMatchingCounters> g_counters;

void bench_matcher(benchmark::State& state) {
  Matcher m;
  for (auto _ : state) {
    auto posted = m.post_receive(kPattern, 7);
    auto arrived = m.arrive(kMessage);
    benchmark::DoNotOptimize(posted);
    benchmark::DoNotOptimize(arrived);
  }
  if (m.posted_count() != 0) state.SkipWithError("the pair did not match");
  state.SetItemsProcessed(state.iterations());
}

void bench_book_software(benchmark::State& state) {
  NicMatcher m(0);
  for (auto _ : state) {
    auto posted = m.post_receive(kPattern, 7);
    auto arrived = m.on_unexpected(kMessage, false);
    benchmark::DoNotOptimize(posted);
    benchmark::DoNotOptimize(arrived);
  }
  if (m.posted_count() != 0) state.SkipWithError("the pair did not match");
  g_counters["book/software"] = m.counters();
  state.SetItemsProcessed(state.iterations());
}

void bench_book_nic(benchmark::State& state) {
  NicMatcher m(64);
  for (auto _ : state) {
    auto posted = m.post_receive(kPattern, 7);
    auto ops = m.take_ops();
    if (ops.size() != 1 || ops[0].kind != NicOp::Kind::kAdd) {
      state.SkipWithError("expected one TAG_ADD");
      break;
    }
    if (!m.on_add_done(ops[0].entry, true, false)) {
      state.SkipWithError("ADD completion refused");
      break;
    }
    auto match = m.on_nic_match(ops[0].entry);
    if (!match) {
      state.SkipWithError("NIC match refused");
      break;
    }
    benchmark::DoNotOptimize(posted);
    benchmark::DoNotOptimize(match);
  }
  if (m.posted_count() != 0 || m.nic_entries() != 0) state.SkipWithError("entries left over");
  g_counters["book/nic"] = m.counters();
  state.SetItemsProcessed(state.iterations());
}

}  // namespace
}  // namespace tagwire::matching

int main(int argc, char** argv) {
  using namespace tagwire::matching;
  benchmark::RegisterBenchmark("matcher", bench_matcher);
  benchmark::RegisterBenchmark("book/software", bench_book_software);
  benchmark::RegisterBenchmark("book/nic", bench_book_nic);
  benchmark::Initialize(&argc, argv);
  tagwire::bench::NsReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  const double base = reporter.ns("matcher");
  std::printf("\nhost cost per message (ratio to the plain matcher, same run)\n");
  for (const auto& [name, ns] : reporter.all()) {
    std::printf("  %-14s %8.1f ns  %5.2fx\n", name.c_str(), ns, base > 0 ? ns / base : 0.0);
  }
  for (const auto& [name, c] : g_counters) {
    std::printf("  %-14s counters: NIC matched %llu, software %llu, ADDs %llu, syncs %llu\n",
                name.c_str(), static_cast<unsigned long long>(c.matched_by_nic),
                static_cast<unsigned long long>(c.matched_by_software),
                static_cast<unsigned long long>(c.tag_adds),
                static_cast<unsigned long long>(c.syncs));
  }
  benchmark::Shutdown();
  return 0;
}
