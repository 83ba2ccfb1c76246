#include "audit/topo/topo_rules.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>

#include <fmt/format.h>

namespace lossless::audit::topo {

using formats::TopoCell;
using formats::TopoDevice;
using formats::TopoLink;
using formats::TopoMatrix;

namespace {

// Distance of a GPU-NIC path; the weights make one SYS worse than any number
// of NODE hops, and so on, so the assignment fixes the worst paths first.
int64_t Distance(TopoLink l) {
  switch (l) {
    case TopoLink::kSelf:
    case TopoLink::kNvLink:
    case TopoLink::kPix:
      return 0;
    case TopoLink::kPxb:
      return 1;
    case TopoLink::kPhb:
      return 100;
    case TopoLink::kNode:
      return 10'000;
    case TopoLink::kSys:
      return 1'000'000;
  }
  return 1'000'000;
}

// Minimum-cost assignment of every row to a distinct column (rows <= cols),
// Hungarian method with potentials, O(rows^2 * cols). Returns column per row.
std::vector<size_t> Assign(const std::vector<std::vector<int64_t>>& cost) {
  const size_t n = cost.size(), m = cost.empty() ? 0 : cost[0].size();
  const int64_t kInf = std::numeric_limits<int64_t>::max() / 4;
  std::vector<int64_t> u(n + 1, 0), v(m + 1, 0);
  std::vector<size_t> p(m + 1, 0), way(m + 1, 0);
  for (size_t i = 1; i <= n; ++i) {
    p[0] = i;
    size_t j0 = 0;
    std::vector<int64_t> minv(m + 1, kInf);
    std::vector<char> used(m + 1, 0);
    do {
      used[j0] = 1;
      size_t i0 = p[j0], j1 = 0;
      int64_t delta = kInf;
      for (size_t j = 1; j <= m; ++j) {
        if (used[j]) continue;
        int64_t cur = cost[i0 - 1][j - 1] - u[i0] - v[j];
        if (cur < minv[j]) {
          minv[j] = cur;
          way[j] = j0;
        }
        if (minv[j] < delta) {
          delta = minv[j];
          j1 = j;
        }
      }
      for (size_t j = 0; j <= m; ++j) {
        if (used[j]) {
          u[p[j]] += delta;
          v[j] -= delta;
        } else {
          minv[j] -= delta;
        }
      }
      j0 = j1;
    } while (p[j0] != 0);
    do {
      size_t j1 = way[j0];
      p[j0] = p[j1];
      j0 = j1;
    } while (j0 != 0);
  }
  std::vector<size_t> out(n, 0);
  for (size_t j = 1; j <= m; ++j)
    if (p[j] != 0) out[p[j] - 1] = j - 1;
  return out;
}

std::string Reason(TopoLink l) {
  switch (l) {
    case TopoLink::kPix:
      return "same PCIe switch";
    case TopoLink::kPxb:
      return "PCIe switches below one host bridge";
    case TopoLink::kNvLink:
      return "NVLink";
    case TopoLink::kPhb:
      return "crosses the PCIe host bridge (root complex): GPUDirect RDMA goes through the CPU";
    case TopoLink::kNode:
      return "crosses PCIe root complexes inside the NUMA node";
    case TopoLink::kSys:
      return "crosses the CPU socket interconnect (QPI/UPI/xGMI)";
    case TopoLink::kSelf:
      break;
  }
  return "";
}

}  // namespace

TopoReport EvaluateTopo(const TopoMatrix& m) {
  TopoReport rep;
  rep.file = m.file;
  const std::vector<size_t> gpus = m.Gpus(), nics = m.Nics();
  rep.gpus = static_cast<int64_t>(gpus.size());
  rep.nics = static_cast<int64_t>(nics.size());
  if (gpus.empty() || nics.empty()) {
    rep.verdict = Verdict::kIndeterminate;
    rep.findings.emplace_back(gpus.empty()
                                  ? "no GPUs in the matrix: nothing to pair"
                                  : "no NICs in the matrix: GPU-NIC placement cannot be judged "
                                    "(no RDMA NIC, or the driver did not list it)");
    for (size_t n : nics) rep.unused_nics.push_back(m.devices[n].name);
    return rep;
  }
  const size_t G = gpus.size(), N = nics.size();
  const size_t cap = N >= G ? 1 : (G + N - 1) / N;
  // Natural (listing-order) NIC of GPU g.
  auto natural = [&](size_t g) { return N >= G ? g : g * N / G; };
  // Slots: NIC k repeated cap times.
  std::vector<std::vector<int64_t>> cost(G, std::vector<int64_t>(N * cap));
  for (size_t g = 0; g < G; ++g) {
    for (size_t k = 0; k < N; ++k) {
      int64_t d = Distance(m.cells[gpus[g]][nics[k]].link);
      int64_t tie = static_cast<int64_t>(k > natural(g) ? k - natural(g) : natural(g) - k);
      for (size_t s = 0; s < cap; ++s) cost[g][k * cap + s] = d * 1000 + tie;
    }
  }
  std::vector<size_t> slot = Assign(cost);
  std::vector<int64_t> load(N, 0);
  std::vector<size_t> nic_of(G);
  for (size_t g = 0; g < G; ++g) {
    nic_of[g] = slot[g] / cap;
    ++load[nic_of[g]];
  }
  bool all_phb = true;
  for (size_t g = 0; g < G; ++g)
    for (size_t k = 0; k < N; ++k) all_phb &= m.cells[gpus[g]][nics[k]].link == TopoLink::kPhb;
  bool numa_unknown = std::all_of(gpus.begin(), gpus.end(), [&](size_t g) {
    return m.devices[g].numa_affinity == "N/A" || m.devices[g].numa_affinity.empty();
  });

  for (size_t g = 0; g < G; ++g) {
    const TopoDevice& gd = m.devices[gpus[g]];
    const TopoDevice& nd = m.devices[nics[nic_of[g]]];
    const TopoCell& c = m.cells[gpus[g]][nics[nic_of[g]]];
    TopoPair p;
    p.gpu = gd.column;
    p.nic = nd.name;
    p.nic_column = nd.column;
    p.link = c.link;
    p.link_text = c.text;
    p.gpu_numa = gd.numa_affinity;
    p.shared_by = load[nic_of[g]];
    if (all_phb) {
      p.verdict = Verdict::kIndeterminate;
      p.reason = "PHB everywhere: real PCIe placement hidden (virtual machine?)";
    } else {
      p.numa_match = c.link != TopoLink::kSys;
      bool good =
          c.link == TopoLink::kPix || c.link == TopoLink::kPxb || c.link == TopoLink::kNvLink;
      p.verdict = good ? Verdict::kPass : Verdict::kFail;
      p.reason = Reason(c.link);
    }
    rep.pairs.push_back(std::move(p));
  }
  for (size_t k = 0; k < N; ++k)
    if (load[k] == 0) rep.unused_nics.push_back(m.devices[nics[k]].name);

  // Listing order vs best pairing, and the NCCL_IB_HCA list that aligns them.
  int64_t natural_cost = 0, best_cost = 0;
  for (size_t g = 0; g < G; ++g) {
    natural_cost += Distance(m.cells[gpus[g]][nics[natural(g)]].link);
    best_cost += Distance(m.cells[gpus[g]][nics[nic_of[g]]].link);
    rep.listing_order_differs |= nic_of[g] != natural(g);
  }
  if (!all_phb && (rep.listing_order_differs || !rep.unused_nics.empty())) {
    std::vector<std::string> order;
    for (size_t g = 0; g < G; ++g) {
      const std::string& name = m.devices[nics[nic_of[g]]].name;
      if (std::find(order.begin(), order.end(), name) == order.end()) order.push_back(name);
    }
    bool prefix = false;
    for (size_t a : nics)
      for (size_t b : nics)
        if (a != b && m.devices[b].name.rfind(m.devices[a].name, 0) == 0) prefix = true;
    std::string list = prefix ? "=" : "";
    for (size_t i = 0; i < order.size(); ++i) list += (i ? "," : "") + order[i];
    rep.nccl_ib_hca = list;
  }

  if (all_phb) {
    rep.verdict = Verdict::kIndeterminate;
    rep.findings.push_back(fmt::format(
        "indeterminate: every GPU-NIC path reads PHB{}; a hypervisor shows this, so the real "
        "PCIe placement cannot be told from this matrix (check on the host or with the cloud "
        "provider's topology file)",
        numa_unknown ? " and NUMA affinity is N/A" : ""));
    return rep;
  }
  for (const auto& p : rep.pairs) {
    if (p.verdict != Verdict::kFail) continue;
    rep.verdict = Verdict::kFail;
    rep.findings.push_back(
        fmt::format("{} -> {} ({}) is {}: {}", p.gpu, p.nic, p.nic_column, p.link_text, p.reason));
  }
  if (rep.verdict == Verdict::kFail) {
    rep.findings.emplace_back(
        "no NIC order fixes the failing pairs: no closer NIC exists for them (move the NIC or "
        "GPU to the same PCIe switch, or pin those ranks elsewhere)");
  }
  if (natural_cost > best_cost) {
    rep.findings.push_back(fmt::format(
        "listing order (GPU i with NIC i) is worse than the best pairing; to make them agree "
        "set NCCL_IB_HCA={}",
        *rep.nccl_ib_hca));
  }
  if (!rep.unused_nics.empty()) {
    std::string names;
    for (size_t i = 0; i < rep.unused_nics.size(); ++i)
      names += (i ? ", " : "") + rep.unused_nics[i];
    rep.findings.push_back(fmt::format("not paired with any GPU: {}", names));
  }
  return rep;
}

}  // namespace lossless::audit::topo
