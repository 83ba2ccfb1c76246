#include "perf/result.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "collective/model/alpha_beta.hpp"

namespace lossless::perf {

double HalfResult::MeanUs() const {
  if (samples_us.empty()) return 0;
  return std::accumulate(samples_us.begin(), samples_us.end(), 0.0) /
         static_cast<double>(samples_us.size());
}

double HalfResult::PercentileUs(int p) const {
  if (samples_us.empty()) return 0;
  std::vector<double> sorted = samples_us;
  std::sort(sorted.begin(), sorted.end());
  const int n = static_cast<int>(sorted.size());
  const int idx = std::clamp(std::min(n - 1, (n * p + 99) / 100 - 1), 0, n - 1);
  return sorted[static_cast<size_t>(idx)];
}

double HalfResult::MaxUs() const {
  if (samples_us.empty()) return 0;
  return *std::max_element(samples_us.begin(), samples_us.end());
}

Row ToRow(const SizeResult& s, collective::Collective c, int64_t n_ranks, int64_t per_iter_skip) {
  Row row;
  row.size_bytes = s.counts.size_bytes;
  row.count = s.counts.count;
  row.type = std::string(collective::DataTypeName(s.type));
  row.redop = collective::PrintsRedOp(c) ? std::string(collective::RedOpName(s.op)) : "none";
  row.root = s.root;
  auto half = [&](const HalfResult& h) {
    HalfRow out;
    out.time_us = h.MeanUs();
    out.algbw_gbs = collective::AlgBwGbs(s.counts.size_bytes, out.time_us);
    out.busbw_gbs = collective::BusBwGbs(c, n_ranks, s.counts.size_bytes, out.time_us);
    out.wrong = h.wrong;
    const size_t skip =
        std::min(h.samples_us.size(), static_cast<size_t>(std::max<int64_t>(per_iter_skip, 0)));
    out.iter_us.assign(h.samples_us.begin() + static_cast<std::ptrdiff_t>(skip),
                       h.samples_us.end());
    return out;
  };
  row.out_of_place = half(s.out_of_place);
  row.in_place = half(s.in_place);
  return row;
}

std::string FormatNcclTests(const PerfResult& r, const std::vector<std::string>& notes) {
  RunHeader header = HeaderFromOptions(r.options);
  header.notes = notes;
  NcclTestsWriter w(r.options.format, header);
  std::string out =
      w.Preamble(ModelledDevices(r.options.nodes, r.options.GpusPerNode(), r.gpu_name));
  for (const SizeResult& s : r.sizes) {
    out += w.AddRow(ToRow(s, r.options.collective, r.options.Ranks(), r.options.per_iter_skip));
  }
  out += w.Footer();
  if (r.simulated && !r.sizes.empty()) out += ChoiceTable(r);
  return out;
}

std::string ChoiceTable(const PerfResult& r) {
  const PerfOptions& o = r.options;
  std::string out = o.model ? "# lossless: per size, what ran (NCCL's choice) and the alpha-beta "
                              "model beside it (out-of-place)\n"
                            : "# lossless: per size, what ran (NCCL's choice)\n";
  out += fmt::format("# {:>12}  {:>5}  {:>6}  {:>3}  {:>10}", "size", "algo", "proto", "nch",
                     "nccl(us)");
  if (o.model) out += fmt::format("  {:>10}  {:>10}  {:>9}  {:>8}", "sim(us)", "model(us)",
                                  "sim/model", "busbw");
  out += "\n";
  for (const SizeResult& s : r.sizes) {
    // NCCL's tuning model predicts no time for point-to-point (alltoall,
    // sendrecv): "-", not 0.
    out += fmt::format("# {:>12}  {:>5}  {:>6}  {:>3}  {:>10}", s.counts.size_bytes,
                       collective::AlgorithmName(s.choice.algorithm),
                       collective::ProtocolName(s.choice.protocol), s.choice.channels,
                       s.choice.time_us > 0 ? fmt::format("{:.2f}", s.choice.time_us) : "-");
    if (o.model) {
      const double sim = s.out_of_place.MeanUs();
      const double model = s.model_us.value_or(0);
      out += fmt::format("  {:>10.2f}  {:>10.2f}  {:>9.3f}  {:>8.2f}", sim, model,
                         model > 0 ? sim / model : 0.0,
                         collective::BusBwGbs(o.collective, o.Ranks(), s.counts.size_bytes,
                                              model));
    }
    out += "\n";
  }
  return out;
}

namespace {

nlohmann::json HalfJson(const HalfResult& h, const HalfRow& row) {
  nlohmann::json j;
  j["time_us"] = row.time_us;
  j["algbw_gbs"] = row.algbw_gbs;
  j["busbw_gbs"] = row.busbw_gbs;
  j["wrong"] = h.wrong ? nlohmann::json(*h.wrong) : nlohmann::json(nullptr);
  j["iterations"] = h.samples_us.size();
  j["p50_us"] = h.PercentileUs(50);
  j["p99_us"] = h.PercentileUs(99);
  j["max_us"] = h.MaxUs();
  return j;
}

}  // namespace

nlohmann::json ToJson(const PerfResult& r) {
  const PerfOptions& o = r.options;
  nlohmann::json j;
  j["schema"] = "lossless.perf/1";
  j["kind"] = r.simulated ? "simulation" : "model";
  j["collective"] = std::string(collective::CollectiveName(o.collective));
  j["binary"] = collective::BinaryName(o.collective);
  j["nodes"] = o.nodes;
  j["gpus_per_node"] = o.GpusPerNode();
  j["ranks"] = o.Ranks();
  j["nccl_version"] = r.nccl_version;
  j["fabric"] = r.fabric;
  j["options"] = {
      {"min_bytes", o.min_bytes},
      {"max_bytes", o.max_bytes},
      {"step_bytes", o.step_bytes},
      {"step_factor", o.step_factor},
      {"iters", o.iters},
      {"warmup_iters", o.warmup_iters},
      {"agg_iters", o.agg_iters},
      {"run_cycles", o.run_cycles},
      {"check", o.check},
      {"root", o.root},
      {"blocking", o.blocking},
      {"average", o.average},
      {"format", o.format == OutputFormat::kG3 ? "g3" : "g2"},
  };
  nlohmann::json results = nlohmann::json::array();
  NcclTestsWriter sums(o.format, RunHeader{});
  for (const SizeResult& s : r.sizes) {
    const Row row = ToRow(s, o.collective, o.Ranks());
    sums.AddRow(row);
    nlohmann::json e;
    e["size"] = row.size_bytes;
    e["count"] = row.count;
    e["type"] = row.type;
    e["redop"] = row.redop;
    e["root"] = row.root;
    e["algorithm"] = std::string(collective::AlgorithmName(s.choice.algorithm));
    e["protocol"] = std::string(collective::ProtocolName(s.choice.protocol));
    e["channels"] = s.choice.channels;
    e["model_us"] = s.model_us ? nlohmann::json(*s.model_us) : nlohmann::json(nullptr);
    e["model_busbw_gbs"] =
        s.model_us ? nlohmann::json(collective::BusBwGbs(o.collective, o.Ranks(),
                                                         row.size_bytes, *s.model_us))
                   : nlohmann::json(nullptr);
    e["nccl_model_us"] =
        s.choice.time_us > 0 ? nlohmann::json(s.choice.time_us) : nlohmann::json(nullptr);
    e["out_of_place"] = HalfJson(s.out_of_place, row.out_of_place);
    e["in_place"] = HalfJson(s.in_place, row.in_place);
    results.push_back(std::move(e));
  }
  j["results"] = std::move(results);
  j["avg_busbw_gbs"] = sums.AvgBusBw();
  j["out_of_bounds"] = sums.OutOfBounds();
  j["interrupted"] = r.interrupted;
  if (r.simulated) {
    j["ack_timeouts"] = r.ack_timeouts;
    j["naks"] = r.naks;
  }
  if (r.node) {
    const PerfNode& n = *r.node;
    nlohmann::json rails = nlohmann::json::array();
    for (const PerfRail& rail : n.rails)
      rails.push_back({{"gpu", rail.gpu},
                       {"nic", rail.nic},
                       {"pcie_path", rail.hop},
                       {"gdr", rail.gdr},
                       {"nic_gbs", rail.nic_gbs}});
    j["node"] = {{"preset", n.preset},
                 {"gpus_per_node", n.gpus_per_node},
                 {"nvlink_gbs", n.nvlink_gbs},
                 {"pcie_gen", n.pcie_gen},
                 {"pcie_lanes", n.pcie_lanes},
                 {"gdr", n.gdr},
                 {"nic_of_gpu", n.nic_of_gpu},
                 {"rails", std::move(rails)},
                 {"qps_per_connection", n.qps_per_connection},
                 {"split_data_on_qps", n.split_data_on_qps}};
  }
  nlohmann::json links = nlohmann::json::array();
  for (const LinkCounters& l : r.links) {
    links.push_back({{"link", l.link},
                     {"pause_frames", l.pause_frames},
                     {"paused_us", l.paused_us},
                     {"ecn_marks", l.ecn_marks},
                     {"cnps", l.cnps},
                     {"drops", l.drops},
                     {"retransmissions", l.retransmissions},
                     {"credit_starved_us", l.credit_starved_us}});
  }
  j["links"] = std::move(links);
  return j;
}

}  // namespace lossless::perf
