#include "verbs/tm_header.h"

#include <endian.h>

#include <cstring>

namespace tagwire::verbs {

void encode_tm_header(const TmHeader& header, std::span<std::uint8_t, kTmHeaderBytes> out) {
  ibv_tmh tmh{};
  tmh.opcode = static_cast<std::uint8_t>(header.op);
  tmh.app_ctx = htobe32(header.app_context);
  tmh.tag = htobe64(header.tag);
  std::memcpy(out.data(), &tmh, sizeof tmh);
}

std::optional<TmHeader> decode_tm_header(std::span<const std::uint8_t> in) {
  if (in.size() < kTmHeaderBytes) return std::nullopt;
  ibv_tmh tmh;
  std::memcpy(&tmh, in.data(), sizeof tmh);
  if (tmh.opcode > IBV_TMH_EAGER) return std::nullopt;
  if (tmh.reserved[0] != 0 || tmh.reserved[1] != 0 || tmh.reserved[2] != 0) return std::nullopt;
  return TmHeader{static_cast<ibv_tmh_op>(tmh.opcode), be32toh(tmh.app_ctx), be64toh(tmh.tag)};
}

void encode_rendezvous_header(const RendezvousHeader& header,
                              std::span<std::uint8_t, kRendezvousHeaderBytes> out) {
  ibv_rvh rvh{};
  rvh.va = htobe64(header.address);
  rvh.rkey = htobe32(header.rkey);
  rvh.len = htobe32(header.length);
  std::memcpy(out.data(), &rvh, sizeof rvh);
}

std::optional<RendezvousHeader> decode_rendezvous_header(std::span<const std::uint8_t> in) {
  if (in.size() < kRendezvousHeaderBytes) return std::nullopt;
  ibv_rvh rvh;
  std::memcpy(&rvh, in.data(), sizeof rvh);
  return RendezvousHeader{be64toh(rvh.va), be32toh(rvh.rkey), be32toh(rvh.len)};
}

}  // namespace tagwire::verbs
