#pragma once
// Packets and their pool. A packet is a 64-byte record, one cache line,
// addressed by a 32-bit index; queues chain packets through `next`, so queuing allocates nothing.
// The pool grows to the peak number of packets alive and then recycles.
#include <cstdint>
#include <vector>

namespace lossless::fabric {

using PacketRef = uint32_t;
inline constexpr PacketRef kNoPacket = UINT32_MAX;

// kPause describes an 802.1Qbb PFC frame to transmit traces only (PAUSE
// frames travel as events, not pooled packets): `entropy` holds the
// class-enable vector and `payload` the pause time in quanta (0 = XON).
enum class PacketKind : uint8_t { kData = 0, kAck = 1, kCnp = 2, kControl = 3, kPause = 4 };

// Packet::flags bits. kPacketSourceRouted: switches take the flow's explicit
// route (FlowSpec::route) instead of the routing tables.
inline constexpr uint8_t kPacketSourceRouted = 1;
// kPacketFecn: InfiniBand forward explicit congestion notification (IB CC).
inline constexpr uint8_t kPacketFecn = 2;
// kPacketLast: RC data, the last packet of its message (asks for an ACK).
// kPacketNak: an RC ACK packet that is a sequence-error NAK; `seq` holds the
// expected PSN (an ACK's `seq` is the last PSN placed in order).
inline constexpr uint8_t kPacketLast = 4;
inline constexpr uint8_t kPacketNak = 8;
// kPacketAfterRestore: sent by a switch egress queue after its PFC watchdog
// restore period ended and before it applied a PAUSE again; a lossless drop
// of it at the next switch counts as a lossless drop after a watchdog restore
// (docs/deadlock.md#the-watchdog-restore-hazard). Set or cleared at every
// transmission.
inline constexpr uint8_t kPacketAfterRestore = 16;

// ECN codepoint (RFC 3168): 0 Not-ECT, 2 ECT(0), 3 CE.
inline constexpr uint8_t kEcnNotEct = 0, kEcnEct0 = 2, kEcnCe = 3;

struct alignas(64) Packet {
  int64_t sent_ps;  // time the source NIC started sending it (latency origin)
  // On a wire: when this packet reaches the next hop's queue (its arrival
  // event's time; an event that finds another time is stale).
  int64_t next_arrive_ps;
  int64_t tail_ps;   // when its last bit reaches the next hop (cut-through)
  uint32_t flow;     // flow index in the network
  uint32_t src;      // source host rank
  uint32_t dst;      // destination host rank
  uint32_t seq;      // packet number within the flow (RC: the PSN)
  uint32_t payload;  // payload bytes
  uint32_t wire;     // bytes of link time (payload + framing)
  PacketRef next;    // next packet in whatever FIFO holds this one
  uint16_t entropy;  // UDP source port (RoCE) / flow label used by ECMP
  uint8_t tclass;    // traffic class: RoCE priority or IB SL (0-7)
  uint8_t ecn;       // ECN codepoint
  PacketKind kind;
  uint8_t hops;      // links traversed so far
  uint8_t flags;     // kPacketSourceRouted, ...
  uint8_t in_class;  // class it arrived with at the current switch (PFC ingress accounting)
  // Switch port it entered through (PFC ingress accounting). On a wire, where
  // nothing reads it (Deliver sets it at the far end), it holds the low 32
  // bits of the arrival event's key instead (Network::TryTransmit).
  uint32_t ingress;
};
static_assert(sizeof(Packet) == 64, "Packet grows only with reason (memory per packet in flight)");

class PacketPool {
 public:
  // Told of every Alloc (+1) and Free (-1), when set: a distributed run logs
  // where in the serial order the count of packets alive changes
  // (docs/parallel.md#the-peak-of-packets-alive), so events that allocate
  // nothing cost it nothing. Unset (every serial run), a branch per call.
  class Observer {
   public:
    virtual void PacketsChanged(int delta) = 0;

   protected:
    ~Observer() = default;
  };
  void set_observer(Observer* o) { observer_ = o; }

  PacketRef Alloc() {
    if (observer_ != nullptr) [[unlikely]]
      observer_->PacketsChanged(1);
    return AllocQuiet();
  }
  void Free(PacketRef r) {
    if (observer_ != nullptr) [[unlikely]]
      observer_->PacketsChanged(-1);
    FreeQuiet(r);
  }
  // Without telling the observer: a distributed run's copies of frames that
  // cross ranks, which the serial count holds once (Network::SerialLive).
  PacketRef AllocQuiet() {
    if (free_ != kNoPacket) {
      PacketRef r = free_;
      free_ = packets_[r].next;
      // The next Alloc reads the new head's link: freed records are spread
      // over the pool, so ask for it now (a hint).
      if (free_ != kNoPacket) __builtin_prefetch(&packets_[free_]);
      ++live_;
      if (live_ > peak_) peak_ = live_;
      return r;
    }
    packets_.emplace_back();
    ++live_;
    if (live_ > peak_) peak_ = live_;
    return static_cast<PacketRef>(packets_.size() - 1);
  }
  void FreeQuiet(PacketRef r) {
    packets_[r].next = free_;
    free_ = r;
    --live_;
  }
  Packet& operator[](PacketRef r) { return packets_[r]; }
  const Packet& operator[](PacketRef r) const { return packets_[r]; }
  uint64_t live() const { return live_; }
  uint64_t peak() const { return peak_; }
  // Bytes held per packet slot (record + vector slack amortised).
  static constexpr uint64_t kBytesPerPacket = sizeof(Packet);

 private:
  std::vector<Packet> packets_;
  PacketRef free_ = kNoPacket;
  uint64_t live_ = 0;
  uint64_t peak_ = 0;
  Observer* observer_ = nullptr;
};

// FIFO of packets chained through Packet::next.
struct PacketFifo {
  PacketRef head = kNoPacket;
  PacketRef tail = kNoPacket;
  bool empty() const { return head == kNoPacket; }
  void Push(PacketPool& pool, PacketRef r) {
    pool[r].next = kNoPacket;
    if (tail == kNoPacket) {
      head = tail = r;
    } else {
      pool[tail].next = r;
      tail = r;
    }
  }
  PacketRef Pop(PacketPool& pool) {
    PacketRef r = head;
    head = pool[r].next;
    if (head == kNoPacket) tail = kNoPacket;
    return r;
  }
};

}  // namespace lossless::fabric
