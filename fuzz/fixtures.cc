#include "fuzz/fixtures.h"

#include <string>

#include "api/defaults.h"
#include "api/jobset_builder.h"

namespace jobset::fuzz {

api::JobSet TwoPodJobSet(const std::string& name) {
  api::JobSet js = api::testing::JobSetBuilder(name)
                       .Replicated("workers", 2)
                       .RestartPolicy("workers", "Never")
                       .BackoffLimit("workers", 0)
                       .FailurePolicy(3)
                       .Build();
  api::SetJobSetDefaults(&js);
  js.mutable_metadata()->set_uid("js-uid");
  js.mutable_metadata()->mutable_creation_timestamp()->set_seconds(1);
  return js;
}

}  // namespace jobset::fuzz
