#ifndef JOBSET_API_ENV_EXPANSION_H_
#define JOBSET_API_ENV_EXPANSION_H_

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "proto/k8s.pb.h"

namespace jobset::api {

// Looks a variable up: its value, or nullopt when it is not defined.
using EnvLookup =
    std::function<std::optional<std::string>(absl::string_view name)>;

// Expands `$(NAME)` references in `input` as kubelet does (the rules of
// k8s.io/kubernetes/third_party/forked/golang/expansion):
//   - `$(NAME)` becomes NAME's value when `lookup` defines it, and stays
//     `$(NAME)` when it does not (a reference to nothing is left as written);
//   - `$$` is an escaped `$`: `$$(NAME)` becomes the text `$(NAME)`;
//   - `$(` without a closing `)` is left as written, and so is a `$` before
//     any other character and a `$` that ends the input;
//   - the name is everything up to the first `)`, and a value is never
//     expanded again.
// Pure and thread-compatible.
std::string ExpandEnvReferences(absl::string_view input,
                                const EnvLookup& lookup);

// Expands `$(NAME)` in `container`'s command and args from its env (the last
// definition of a name wins, as in kubelet's map), as kubelet does before it
// starts a container.
void ExpandCommandAndArgs(Container* container);

}  // namespace jobset::api

#endif  // JOBSET_API_ENV_EXPANSION_H_
