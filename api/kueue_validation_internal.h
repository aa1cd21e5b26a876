#ifndef JOBSET_API_KUEUE_VALIDATION_INTERNAL_H_
#define JOBSET_API_KUEUE_VALIDATION_INTERNAL_H_

// Parts of api/kueue_validation.h that its .cc files share: the errors
// Kubernetes' CRD schema gives (OpenAPI and CEL, in apiextensions-apiserver's
// words), Kubernetes quantities as Kueue's webhooks see them, metadata, and
// the checks ClusterQueues and Cohorts share. Internal to //api.

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "api/field_errors.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "proto/k8s.pb.h"
#include "proto/kueue.pb.h"

namespace jobset::api::kueue_internal {

template <typename T>
using Repeated = google::protobuf::RepeatedPtrField<T>;

// The patterns of Kueue's CRD schema, as its error messages print them.
inline constexpr absl::string_view kSubdomainPattern =
    R"(^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$)";
inline constexpr absl::string_view kLabelPattern =
    R"(^[a-z0-9]([-a-z0-9]*[a-z0-9])?$)";
inline constexpr absl::string_view kQuantityPattern =
    R"(^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$)";

// ---- Schema errors (the CRD's OpenAPI schema and CEL rules) ----

// `path: Invalid value: "v": path in body should match '<pattern>'`.
void SchemaPattern(absl::string_view path, absl::string_view value,
                   absl::string_view pattern, FieldErrors* errors);
// `path: Invalid value: 5: path in body should be greater than or equal to
// <min>` when value < min.
void SchemaMinimum(absl::string_view path, int64_t value, int64_t min,
                   FieldErrors* errors);
// `path: Unsupported value: ...` unless `value` is empty (unset) or allowed.
void SchemaEnum(absl::string_view path, absl::string_view value,
                absl::Span<const absl::string_view> allowed,
                FieldErrors* errors);
// `path: Too many: N: must have at most M items` when count > max.
void SchemaMaxItems(absl::string_view path, int64_t count, int64_t max,
                    FieldErrors* errors);
// A CEL rule that failed: `path: Invalid value: "<type>": <message>`, type
// being "object", "array" or "string" as the schema has the node.
void CelRule(absl::string_view path, absl::string_view type,
             absl::string_view message, FieldErrors* errors);
// A reference to a Kueue object (ClusterQueue, Cohort, ResourceFlavor,
// LocalQueue, Topology or priority class): unless empty, at most 253 bytes
// matching kSubdomainPattern.
void SchemaReference(absl::string_view path, absl::string_view value,
                     FieldErrors* errors);
// A podSet name: at most 63 bytes matching kLabelPattern.
void SchemaPodSetName(absl::string_view path, absl::string_view value,
                      FieldErrors* errors);

// ---- Quantities ----

// A Kubernetes quantity exactly: amount x 10^scale, scale >= -9 (finer
// values round away from zero, as Kubernetes does), with the format its
// suffix chose.
struct KubeQuantity {
  enum class Format { kDecimalSi, kBinarySi, kDecimalExponent };
  __int128 amount = 0;
  int scale = 0;
  Format format = Format::kDecimalSi;
};

// Reads `text` as Kubernetes does; nullopt when it does not match
// kQuantityPattern, has an exponent that is not an integer, or has more
// than 30 significant digits or an exponent beyond +-40 (which jobsetd does
// not hold).
std::optional<KubeQuantity> ReadQuantity(absl::string_view text);
// Returns Kubernetes' canonical form of `q` (resource.Quantity's String()):
// "1536Mi" for 1.5Gi, "500m" for 0.5, "2k" for 2000.
std::string CanonicalQuantity(const KubeQuantity& q);
// Returns -1, 0 or 1 as a < b, a == b or a > b.
int CompareQuantities(const KubeQuantity& a, const KubeQuantity& b);
// Checks that `text` matches kQuantityPattern (the schema's check of a
// Quantity) and that jobsetd can hold it; returns the quantity if so.
std::optional<KubeQuantity> SchemaQuantity(absl::string_view path,
                                           absl::string_view text,
                                           FieldErrors* errors);
// Kueue's validateResourceQuantity: `path: Invalid value: "<canonical>":
// must be greater than or equal to 0` for a negative quantity. Skips text
// that is not a quantity (the schema reports it).
void NonNegativeQuantity(absl::string_view path, absl::string_view text,
                         FieldErrors* errors);

// ---- Metadata ----

// Checks an object's metadata on create as Kubernetes does for a custom
// resource: name (or generateName) a DNS-1123 subdomain; namespace required
// and a DNS-1123 label when `namespaced`, forbidden otherwise; labels and
// annotations.
void ValidateMeta(const ObjectMeta& meta, bool namespaced, FieldErrors* errors);
// Checks that name, namespace and uid did not change, and the new labels
// and annotations.
void ValidateMetaUpdate(const ObjectMeta& old_meta, const ObjectMeta& new_meta,
                        FieldErrors* errors);
// `<kind> "<name or generateName>"`, what FieldErrors::ToStatus names.
std::string ObjectName(absl::string_view kind, const ObjectMeta& meta);

// ---- Phases ----

// Kubernetes skips CEL rules once the schema found a missing, unsupported,
// too long or too many value; it reports that instead. Adds that report and
// returns false when `errors` hold such a value; returns true when the CEL
// rules are to be checked.
bool CelRulesApply(FieldErrors* errors);

// ---- Tolerations (a ResourceFlavor's) ----

// At most 8 (schema).
void SchemaTolerations(const Repeated<Toleration>& tolerations,
                       absl::string_view path, FieldErrors* errors);
// The five CEL rules on the list: key, operator, value, effect and
// tolerationSeconds agree.
void CelTolerations(const Repeated<Toleration>& tolerations,
                    absl::string_view path, FieldErrors* errors);
// Keys are qualified names (webhook).
void WebhookTolerations(const Repeated<Toleration>& tolerations,
                        absl::string_view path, FieldErrors* errors);

}  // namespace jobset::api::kueue_internal

#endif  // JOBSET_API_KUEUE_VALIDATION_INTERNAL_H_
