#include "verbs/verbs_address.h"

#include <cstring>
#include <string>

namespace tagwire::verbs {

namespace {

struct Head {
  std::uint32_t magic;
  std::uint32_t count;  // ranks in the job
  ibv_gid gid;
  std::uint16_t lid;
  std::uint16_t flags;
  std::uint64_t ring_address;
  std::uint64_t credit_address;
  std::uint32_t ring_rkey;
  std::uint32_t credit_rkey;
  std::uint32_t ring_slots;
  std::uint32_t slot_size;
  std::uint32_t cm_ipv4;  // network order
  std::uint16_t cm_port;
  std::uint16_t reserved;
};
constexpr std::uint32_t kAddressMagic = 0x54575643;  // "TWVC"
constexpr std::uint16_t kWakeOnEveryMessage = 1;
constexpr std::uint16_t kConnectByCm = 2;
constexpr std::uint16_t kNicMatching = 4;
constexpr std::size_t kRingQpBytes = 8;     // qpn, psn
constexpr std::size_t kTaggedQpBytes = 16;  // send qpn, psn, tagged qpn, psn

}  // namespace

QpAddress VerbsAddress::ring_qp(std::size_t rank) const {
  return QpAddress{ring_qps[rank].qpn, ring_qps[rank].psn, lid, gid};
}

ChannelAddress VerbsAddress::channel(std::size_t rank) const {
  const TaggedQps& t = tagged_qps[rank];
  return ChannelAddress{QpAddress{t.send.qpn, t.send.psn, lid, gid},
                        QpAddress{t.tagged.qpn, t.tagged.psn, lid, gid}};
}

std::vector<std::uint8_t> pack_address(const VerbsAddress& a) {
  Head head{};
  head.magic = kAddressMagic;
  head.count = static_cast<std::uint32_t>(a.ring_qps.size());
  head.gid = a.gid;
  head.lid = a.lid;
  head.flags = static_cast<std::uint16_t>((a.wake_on_every_message ? kWakeOnEveryMessage : 0) |
                                          (a.connect_by_cm ? kConnectByCm : 0) |
                                          (a.nic_matching ? kNicMatching : 0));
  head.ring_address = a.ring_address;
  head.credit_address = a.credit_address;
  head.ring_rkey = a.ring_rkey;
  head.credit_rkey = a.credit_rkey;
  head.ring_slots = a.ring_slots;
  head.slot_size = a.slot_size;
  head.cm_ipv4 = a.cm.ipv4;
  head.cm_port = a.cm.port;
  const std::size_t count = a.ring_qps.size();
  std::vector<std::uint8_t> out(sizeof(head) +
                                count * (kRingQpBytes + (a.nic_matching ? kTaggedQpBytes : 0)));
  std::memcpy(out.data(), &head, sizeof(head));
  std::uint8_t* at = out.data() + sizeof(head);
  for (const auto& q : a.ring_qps) {
    const std::uint32_t pair[2] = {q.qpn, q.psn};
    std::memcpy(at, pair, kRingQpBytes);
    at += kRingQpBytes;
  }
  for (std::size_t r = 0; a.nic_matching && r < count; ++r) {
    const VerbsAddress::TaggedQps& t = a.tagged_qps[r];
    const std::uint32_t four[4] = {t.send.qpn, t.send.psn, t.tagged.qpn, t.tagged.psn};
    std::memcpy(at, four, kTaggedQpBytes);
    at += kTaggedQpBytes;
  }
  return out;
}

Result<VerbsAddress> unpack_address(std::span<const std::uint8_t> bytes, std::size_t job_size,
                                    std::size_t rank) {
  Head head{};
  if (bytes.size() < sizeof(head)) {
    return Status(ErrorCode::kProtocol, "rank " + std::to_string(rank) +
                                            " published a verbs address of " +
                                            std::to_string(bytes.size()) + " bytes: too short");
  }
  std::memcpy(&head, bytes.data(), sizeof(head));
  const bool tagged = (head.flags & kNicMatching) != 0;
  if (head.magic != kAddressMagic || head.count != job_size ||
      bytes.size() != sizeof(head) + head.count * (kRingQpBytes + (tagged ? kTaggedQpBytes : 0))) {
    return Status(ErrorCode::kProtocol,
                  "rank " + std::to_string(rank) + " published no verbs address for this job");
  }
  VerbsAddress a;
  a.gid = head.gid;
  a.lid = head.lid;
  a.wake_on_every_message = (head.flags & kWakeOnEveryMessage) != 0;
  a.connect_by_cm = (head.flags & kConnectByCm) != 0;
  a.nic_matching = tagged;
  a.ring_address = head.ring_address;
  a.ring_rkey = head.ring_rkey;
  a.credit_address = head.credit_address;
  a.credit_rkey = head.credit_rkey;
  a.ring_slots = head.ring_slots;
  a.slot_size = head.slot_size;
  a.cm = CmEndpoint{head.cm_ipv4, head.cm_port};
  const std::uint8_t* at = bytes.data() + sizeof(head);
  a.ring_qps.resize(job_size);
  for (auto& q : a.ring_qps) {
    std::uint32_t pair[2];
    std::memcpy(pair, at, kRingQpBytes);
    q = {pair[0], pair[1]};
    at += kRingQpBytes;
  }
  if (tagged) {
    a.tagged_qps.resize(job_size);
    for (auto& t : a.tagged_qps) {
      std::uint32_t four[4];
      std::memcpy(four, at, kTaggedQpBytes);
      t = {{four[0], four[1]}, {four[2], four[3]}};
      at += kTaggedQpBytes;
    }
  }
  return a;
}

}  // namespace tagwire::verbs
