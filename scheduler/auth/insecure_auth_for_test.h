#ifndef JOBSET_SCHEDULER_AUTH_INSECURE_AUTH_FOR_TEST_H_
#define JOBSET_SCHEDULER_AUTH_INSECURE_AUTH_FOR_TEST_H_

#include <memory>

#include "scheduler/auth/access_store.h"
#include "scheduler/auth/request_auth.h"
#include "store/memory_store.h"

namespace jobset::scheduler {

// For in-process tests of something else than authorization: an insecure
// RequestAuth (plaintext; a caller without a token is the development
// administrator) over its own empty MemoryStore.
class InsecureAuthForTest {
 public:
  InsecureAuthForTest()
      : access_(*AccessStore::Load(&store_)),
        auth_({.access = access_.get(), .insecure = true}) {}

  const RequestAuth* get() const { return &auth_; }

 private:
  store::MemoryStore store_;
  std::unique_ptr<AccessStore> access_;
  RequestAuth auth_;
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_AUTH_INSECURE_AUTH_FOR_TEST_H_
