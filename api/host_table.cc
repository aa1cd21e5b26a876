#include "api/host_table.h"

#include <zlib.h>

#include <algorithm>
#include <climits>

#include "absl/strings/str_cat.h"

namespace jobset::api {
namespace {

absl::Status Refused(absl::string_view field, absl::string_view bytes,
                     absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(
      field, ": ", bytes.size(), " bytes are not a host table: ", why));
}

}  // namespace

std::string EncodeHostTable(const HostTable& table) {
  const std::string serialized = table.SerializeAsString();
  uLongf size = compressBound(serialized.size());
  std::string out(size, '\0');
  // The table is one name pattern repeated: the fastest level compresses it
  // nearly as well as the default, in a fraction of the time.
  const int rc = compress2(reinterpret_cast<Bytef*>(out.data()), &size,
                           reinterpret_cast<const Bytef*>(serialized.data()),
                           serialized.size(), Z_BEST_SPEED);
  // compressBound() is enough by definition, and no input is invalid.
  if (rc != Z_OK) abort();
  out.resize(size);
  return out;
}

absl::StatusOr<HostTable> DecodeHostTable(absl::string_view field,
                                          absl::string_view bytes,
                                          int64_t max_bytes) {
  if (bytes.size() > UINT_MAX) return Refused(field, bytes, "too long");
  z_stream zs{};
  if (inflateInit(&zs) != Z_OK) {
    return absl::ResourceExhaustedError(
        absl::StrCat(field, ": zlib could not start"));
  }
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  zs.avail_in = static_cast<uInt>(bytes.size());
  // Room for one byte past the limit: a stream that fills it is too big,
  // so nothing past the limit is ever allocated.
  const int64_t room = max_bytes + 1;
  std::string out;
  out.resize(std::min<int64_t>(
      room, std::max<int64_t>(4096, static_cast<int64_t>(bytes.size()) * 8)));
  const absl::Status too_big = absl::InvalidArgumentError(absl::StrCat(
      field, ": ", bytes.size(), " compressed bytes inflate to more than ",
      max_bytes, " bytes, the most allowed"));
  absl::Status status;
  while (true) {
    if (static_cast<int64_t>(zs.total_out) >= room) {
      status = too_big;
      break;
    }
    if (zs.total_out == out.size()) {
      out.resize(std::min<int64_t>(room, static_cast<int64_t>(out.size()) * 2));
    }
    zs.next_out = reinterpret_cast<Bytef*>(out.data() + zs.total_out);
    zs.avail_out = static_cast<uInt>(
        std::min<size_t>(out.size() - zs.total_out, UINT_MAX));
    const int rc = inflate(&zs, Z_NO_FLUSH);
    if (rc == Z_STREAM_END) {
      if (static_cast<int64_t>(zs.total_out) > max_bytes) {
        status = too_big;
      } else if (zs.avail_in != 0) {
        status = Refused(field, bytes,
                         absl::StrCat(zs.avail_in, " bytes follow its end"));
      }
      break;
    }
    if (rc == Z_OK) continue;
    if (rc == Z_BUF_ERROR && zs.avail_out > 0) {  // no input left
      status = Refused(field, bytes, "the compressed data are cut short");
    } else if (rc == Z_BUF_ERROR) {
      continue;  // only room was wanting; grows above
    } else if (rc == Z_MEM_ERROR) {
      status = absl::ResourceExhaustedError(
          absl::StrCat(field, ": out of memory inflating"));
    } else {
      status = Refused(field, bytes,
                       absl::StrCat("not zlib data (",
                                    zs.msg != nullptr ? zs.msg : "error", ")"));
    }
    break;
  }
  const uLong inflated = zs.total_out;
  inflateEnd(&zs);
  if (!status.ok()) return status;
  HostTable table;
  if (!table.ParseFromArray(out.data(), static_cast<int>(inflated))) {
    return Refused(
        field, bytes,
        absl::StrCat("its ", inflated, " inflated bytes do not parse as one"));
  }
  return table;
}

}  // namespace jobset::api
