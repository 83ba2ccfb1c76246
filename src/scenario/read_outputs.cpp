// What the run watches and writes: deadlock detection (deadlock.*), the
// stop time and outputs.* (JSON, series).
#include <fmt/format.h>

#include "scenario/internal/reader.hpp"

namespace lossless::scenario {

void ReadDeadlock(Fields& f, Scenario& sc) {
  sc.deadlock.detect = f.Bool("deadlock.detect");
  sc.deadlock.persist = f.Time("deadlock.persist");
  if (sc.deadlock.persist.ps() <= 0) f.Fail("deadlock.persist", "a time above zero");
  const std::string stop = f.Choice("deadlock.stop");
  sc.deadlock.stop = stop == "yes" || (stop == "auto" && !sc.net.pfc.watchdog.enabled);
  if (sc.deadlock.detect && !sc.net.pfc.enabled) {
    sc.warnings.emplace_back(
        "deadlock.detect: PFC is off (fabric.pfc.enabled), so no PFC deadlock "
        "can form");
  }
}

void ReadOutputs(Fields& f, Scenario& sc) {
  sc.json_out = PathInScenario(f.Get("outputs.json"), sc.file);
  sc.per_flow_limit = f.Int("outputs.per_flow_limit");
  sc.stop_time = f.Time("stop_time");
  if (sc.stop_time.ps() <= 0) {
    throw InputError(f.Find("stop_time").where, "expected a time above zero");
  }
  CaptureSpec& cap = sc.capture;
  cap.pcap = PathInScenario(f.Get("outputs.pcap"), sc.file);
  cap.pcap_ports = f.Get("outputs.pcap_ports").text;
  cap.pcap_ports_where = f.Find("outputs.pcap_ports").where;
  cap.pcap_from = f.Time("outputs.pcap_from");
  if (cap.pcap_from.ps() < 0) f.Fail("outputs.pcap_from", "a time at or after 0s");
  if (f.Given("outputs.pcap_until")) {
    cap.pcap_until = f.Time("outputs.pcap_until");
    if (cap.pcap_until <= cap.pcap_from) {
      f.Fail("outputs.pcap_until",
             "a time after outputs.pcap_from (" + units::FormatTime(cap.pcap_from) + ")");
    }
  } else {
    f.Get("outputs.pcap_until");
  }
  cap.pcap_limit = f.Bytes("outputs.pcap_limit");
  if (cap.pcap_limit < 4096) f.Fail("outputs.pcap_limit", "a size of at least 4KiB");
  cap.pcap_snaplen = f.Int("outputs.pcap_snaplen");
  cap.pcap_ps = f.Choice("outputs.pcap_resolution") == "ps";
  cap.trace = PathInScenario(f.Get("outputs.trace"), sc.file);
  cap.trace_ports = f.Get("outputs.trace_ports").text;
  cap.trace_ports_where = f.Find("outputs.trace_ports").where;
  cap.trace_limit = f.Bytes("outputs.trace_limit");
  if (cap.trace_limit < 4096) f.Fail("outputs.trace_limit", "a size of at least 4KiB");
  SeriesSpec& series = sc.series;
  series.ports = f.Get("outputs.series.ports").text;
  series.ports_where = f.Find("outputs.series.ports").where;
  series.flows = f.Choice("outputs.series.flows") == "all";
  series.csv_out = PathInScenario(f.Get("outputs.series_csv"), sc.file);
  if (f.Given("outputs.series.interval")) {
    Value v = f.Get("outputs.series.interval");
    series.where = v.where;
    series.interval = units::ParseTime(v.text, v.where);
    if (series.interval.ps() <= 0) {
      throw InputError(v.where, Expected("an interval above zero", v.text));
    }
    if (sc.stop_time.ps() / series.interval.ps() > kMaxSeriesSamples) {
      const int64_t min_ps = (sc.stop_time.ps() + kMaxSeriesSamples - 1) / kMaxSeriesSamples;
      throw InputError(
          v.where,
          Expected(fmt::format("an interval of at least {} (stop_time {} allows at most {} "
                               "samples per series)",
                               units::FormatTime(units::Time::Ps(min_ps)),
                               units::FormatTime(sc.stop_time), kMaxSeriesSamples),
                   v.text));
    }
  } else if (!series.csv_out.empty()) {
    throw InputError(f.Find("outputs.series_csv").where,
                     Expected("outputs.series.interval along with outputs.series_csv", "none"));
  }
}

}  // namespace lossless::scenario
