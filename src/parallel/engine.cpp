#include "parallel/engine.hpp"

#include <bit>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace lossless::parallel {

static_assert(std::endian::native == std::endian::little,
              "the batch format is little-endian and copied as is");

namespace {
struct BatchHeader {
  uint32_t version = WindowEngine::kBatchVersion;
  uint32_t count = 0;
  int64_t window_end = 0;
};
static_assert(sizeof(BatchHeader) == 16);

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}
}  // namespace

WindowEngine::WindowEngine(Comm& comm, sim::Simulator& sim, units::Time lookahead,
                           std::vector<int> neighbours, Deliver deliver)
    : comm_(comm),
      sim_(sim),
      lookahead_ps_(lookahead.ps()),
      neighbours_(std::move(neighbours)),
      slot_of_rank_(static_cast<size_t>(comm.Size()), -1),
      outbox_(neighbours_.size()),
      deliver_(std::move(deliver)) {
  if (lookahead_ps_ <= 0)
    throw std::invalid_argument(fmt::format(
        "window engine: expected a lookahead above zero, got {} ps (a cut link without delay)",
        lookahead_ps_));
  for (size_t i = 0; i < neighbours_.size(); ++i) {
    const int r = neighbours_[i];
    if (r < 0 || r >= comm.Size() || r == comm.Rank() || slot_of_rank_[static_cast<size_t>(r)] >= 0)
      throw std::invalid_argument(fmt::format(
          "window engine: neighbour rank {} of rank {} (of {}) is out of range, this rank or "
          "listed twice",
          r, comm.Rank(), comm.Size()));
    slot_of_rank_[static_cast<size_t>(r)] = static_cast<int>(i);
  }
}

void WindowEngine::Send(int rank, units::Time at, uint32_t source, uint32_t target, uint32_t kind,
                        uint64_t arg) {
  const int slot = rank >= 0 && rank < comm_.Size() ? slot_of_rank_[static_cast<size_t>(rank)] : -1;
  if (slot < 0)
    throw std::logic_error(
        fmt::format("window engine: rank {} sent an event for entity {} to rank "
                    "{}, which is not one of its neighbours",
                    comm_.Rank(), target, rank));
  // The conservative guarantee: nothing crosses ranks closer than the
  // lookahead, so no event lands in the window it was created in.
  if (at.ps() < sim_.Now().ps() + lookahead_ps_)
    throw std::logic_error(fmt::format(
        "window engine: an event for entity {} from entity {} at {} ps crosses ranks less than "
        "the lookahead ({} ps) after its creator's clock ({} ps)",
        target, source, at.ps(), lookahead_ps_, sim_.Now().ps()));
  outbox_[static_cast<size_t>(slot)].push_back(
      RemoteEvent{at.ps(), sim_.DrawKey(source), kind, target, arg});
  ++stats_.sent;
}

void WindowEngine::Run(units::Time until) {
  using Clock = std::chrono::steady_clock;
  const auto t_run = Clock::now();
  auto t0 = Clock::now();
  int64_t next = comm_.AllreduceMin(sim_.NextTime().ps());
  stats_.wait_s += Seconds(Clock::now() - t0);
  std::vector<Outgoing> out(neighbours_.size());
  while (next <= until.ps()) {
    const int64_t end =
        next > INT64_MAX - lookahead_ps_ ? INT64_MAX : next + lookahead_ps_;  // exclusive
    ++stats_.windows;
    const sim::StopReason why = sim_.Run(units::Time::Ps(std::min(end - 1, until.ps())));
    if (why == sim::StopReason::kStopped)
      throw std::logic_error(
          "window engine: an event called Simulator::Stop(), which a "
          "distributed run does not support");
    for (size_t i = 0; i < neighbours_.size(); ++i) {
      std::vector<RemoteEvent>& events = outbox_[i];
      BatchHeader h;
      h.count = static_cast<uint32_t>(events.size());
      h.window_end = end;
      out[i].peer = neighbours_[i];
      out[i].bytes.resize(sizeof h + events.size() * sizeof(RemoteEvent));
      std::memcpy(out[i].bytes.data(), &h, sizeof h);
      if (!events.empty())
        std::memcpy(out[i].bytes.data() + sizeof h, events.data(),
                    events.size() * sizeof(RemoteEvent));
      events.clear();
    }
    t0 = Clock::now();
    const std::vector<std::string> got = comm_.Exchange(out, neighbours_);
    stats_.wait_s += Seconds(Clock::now() - t0);
    for (size_t i = 0; i < got.size(); ++i) {
      const std::string& b = got[i];
      BatchHeader h;
      if (b.size() < sizeof h) throw std::runtime_error("window engine: a batch without header");
      std::memcpy(&h, b.data(), sizeof h);
      if (h.version != kBatchVersion || h.window_end != end ||
          b.size() != sizeof h + size_t{h.count} * sizeof(RemoteEvent))
        throw std::runtime_error(fmt::format(
            "window engine: rank {} got a malformed batch from rank {} (version {}, window end "
            "{} ps, expected {}, {} bytes for {} events)",
            comm_.Rank(), neighbours_[i], h.version, h.window_end, end, b.size(), h.count));
      for (uint32_t k = 0; k < h.count; ++k) {
        RemoteEvent e;
        std::memcpy(&e, b.data() + sizeof h + size_t{k} * sizeof e, sizeof e);
        deliver_(e);
        ++stats_.received;
      }
    }
    t0 = Clock::now();
    next = comm_.AllreduceMin(sim_.NextTime().ps());
    stats_.wait_s += Seconds(Clock::now() - t0);
  }
  stats_.run_s += Seconds(Clock::now() - t_run);
}

}  // namespace lossless::parallel
