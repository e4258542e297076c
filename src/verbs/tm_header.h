// The tag-matching wire headers of rdma-core's contract (infiniband/
// tm_types.h): every message to a tag-matching SRQ starts with the 16-byte
// TMH (operation, 32 bits of opaque data, 64-bit tag, big-endian); a
// rendezvous request adds the 16-byte RVH (address, rkey, length) that the
// NIC uses to RDMA-READ the data itself when it matches.
//
// Tagwire puts the NIC tag (matching/nic_tag.h) in the TMH tag and the low
// 32 bits of the sender's request id in the opaque field.
#pragma once

#include <infiniband/tm_types.h>

#include <cstdint>
#include <optional>
#include <span>

namespace tagwire::verbs {

inline constexpr std::size_t kTmHeaderBytes = sizeof(ibv_tmh);
inline constexpr std::size_t kRendezvousHeaderBytes = sizeof(ibv_rvh);
static_assert(kTmHeaderBytes == 16 && kRendezvousHeaderBytes == 16);

struct TmHeader {
  ibv_tmh_op op = IBV_TMH_EAGER;
  std::uint32_t app_context = 0;
  std::uint64_t tag = 0;
  friend bool operator==(const TmHeader&, const TmHeader&) = default;
};

struct RendezvousHeader {
  std::uint64_t address = 0;
  std::uint32_t rkey = 0;
  std::uint32_t length = 0;
  friend bool operator==(const RendezvousHeader&, const RendezvousHeader&) = default;
};

void encode_tm_header(const TmHeader& header, std::span<std::uint8_t, kTmHeaderBytes> out);
// Nothing if the bytes are too few, the operation is unknown, or the
// reserved bytes are not zero.
std::optional<TmHeader> decode_tm_header(std::span<const std::uint8_t> in);

void encode_rendezvous_header(const RendezvousHeader& header,
                              std::span<std::uint8_t, kRendezvousHeaderBytes> out);
std::optional<RendezvousHeader> decode_rendezvous_header(std::span<const std::uint8_t> in);

}  // namespace tagwire::verbs
