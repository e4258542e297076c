// NsReporter: Google Benchmark's console output as usual, plus the
// nanoseconds per iteration of every run kept by its name, so that a
// benchmark can print ratios between runs of the same process at the end
// (the targets are ratios within one run: these machines are noisy).
#pragma once

#include <benchmark/benchmark.h>

#include <map>
#include <string>
#include <vector>

namespace tagwire::bench {

class NsReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const auto& run : runs) {
      if (run.error_occurred) continue;
      // With --benchmark_repetitions, keep the median; otherwise the run.
      if (run.run_type == Run::RT_Aggregate && run.aggregate_name != "median") continue;
      std::string name = run.run_name.function_name;
      double ns = run.GetAdjustedRealTime() * to_ns(run.time_unit);
      if (run.run_type == Run::RT_Aggregate || !ns_.count(name)) ns_[name] = ns;
    }
  }

  // Nanoseconds per iteration of the run called `name`; -1 if it did not run.
  double ns(const std::string& name) const {
    auto it = ns_.find(name);
    return it == ns_.end() ? -1.0 : it->second;
  }
  const std::map<std::string, double>& all() const { return ns_; }

 private:
  static double to_ns(benchmark::TimeUnit unit) {
    switch (unit) {
      case benchmark::kNanosecond:
        return 1.0;
      case benchmark::kMicrosecond:
        return 1e3;
      case benchmark::kMillisecond:
        return 1e6;
      case benchmark::kSecond:
        return 1e9;
    }
    return 1.0;
  }
  std::map<std::string, double> ns_;
};

}  // namespace tagwire::bench
