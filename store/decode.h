#ifndef JOBSET_STORE_DECODE_H_
#define JOBSET_STORE_DECODE_H_

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/quote.h"
#include "store/store.h"

namespace jobset::store {

// Parses a stored protobuf `Message` (anything with ParseFromString and
// GetTypeName). kDataLoss naming the key and revision when the bytes are
// not one: bad data is reported, never served.
template <typename Message>
absl::StatusOr<Message> DecodeValue(const KeyValue& kv) {
  Message message;
  if (!message.ParseFromString(kv.value)) {
    return absl::DataLossError(
        absl::StrCat("stored value at ", Quote(kv.key), " (revision ",
                     kv.mod_revision, ") is not a ", message.GetTypeName()));
  }
  return message;
}

}  // namespace jobset::store

#endif  // JOBSET_STORE_DECODE_H_
