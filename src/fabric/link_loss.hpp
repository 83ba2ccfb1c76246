#pragma once
// Frames lost on a link: post-FEC bit errors and injected loss (docs/model/transport.md#bit-errors).
//
// Bit errors: each bit of a frame is wrong independently with the post-FEC
// bit error rate; a frame with a wrong bit fails its CRC and the receiver
// drops it. The loss probability of a frame of n bytes is
// 1 - (1 - BER)^(8n), computed as -expm1(8n log1p(-BER)) to keep precision.
// The sampler draws the gap to the next wrong bit (geometric), so a link
// with a BER costs one subtraction per frame. The RS(544,514) ("KP4") FEC
// of 200G/400G/800G Ethernet (IEEE 802.3 clauses 91 and 119) corrects up to
// 15 wrong 10-bit symbols per 544-symbol codeword: CodewordFailure maps a
// pre-FEC BER to the probability that a codeword is uncorrectable, under
// independent errors (real links see bursts, so this is a lower bound).
//
// Injected loss (faults): every D-th data packet the link carries is dropped
// (retransmissions counted), or each one with probability p.
#include <cstdint>

#include "sim/rng.hpp"
#include "units/units.hpp"

namespace lossless::fabric {

// Probability that a frame of `frame_bytes` (preamble and gap excluded) has
// at least one wrong bit at post-FEC bit error rate `ber` (0 <= ber < 1).
double FrameLossProbability(double ber, int64_t frame_bytes);

// Mean time between lost frames on one direction of a link sending
// back-to-back frames of `frame_bytes` taking `wire_bytes` of link time each.
units::Time MeanTimeBetweenLosses(double ber, int64_t frame_bytes, int64_t wire_bytes,
                                  units::Rate rate);

// Probability that an RS(544,514) codeword has more than 15 wrong symbols at
// pre-FEC bit error rate `ber_pre` (independent bit errors, 10-bit symbols).
double Rs544CodewordFailure(double ber_pre);

// Independent bit errors at a fixed rate: the gap to the next wrong bit is
// geometric. Deterministic for a given stream.
class BitErrorSampler {
 public:
  BitErrorSampler() = default;
  BitErrorSampler(double ber, sim::Rng rng);
  // Consumes a frame of `frame_bytes`; true if one of its bits is wrong.
  bool FrameLost(int64_t frame_bytes);

 private:
  int64_t Gap();  // error-free bits before the next wrong one
  double log1m_ber_ = 0;  // log1p(-ber)
  int64_t bits_to_error_ = INT64_MAX;
  sim::Rng rng_;
};

// Loss on one direction of a link (scenario faults.link_loss and the link's BER).
struct LinkLossConfig {
  double ber = 0;           // post-FEC bit error rate; every kind of packet
  int64_t drop_every = 0;   // drop every D-th data packet; 0 = off
  double drop_prob = 0;     // drop each data packet with this probability
  bool Any() const { return ber > 0 || drop_every > 0 || drop_prob > 0; }
};

}  // namespace lossless::fabric
