#ifndef JOBSET_COMMON_STATUS_MATCHERS_H_
#define JOBSET_COMMON_STATUS_MATCHERS_H_

// GoogleTest matchers for absl::Status and absl::StatusOr<T>:
//   EXPECT_THAT(s, IsOk());
//   EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument,
//                           HasSubstr("replicatedJobs[1].name")));
//   EXPECT_THAT(ParseQuantity("4Gi"), IsOkAndHolds(Eq(...)));

#include <ostream>
#include <string>
#include <type_traits>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"

namespace jobset::testing {
namespace internal {

inline const absl::Status& GetStatus(const absl::Status& status) {
  return status;
}
template <typename T>
const absl::Status& GetStatus(const absl::StatusOr<T>& status_or) {
  return status_or.status();
}

class StatusIsMatcher {
 public:
  StatusIsMatcher(::testing::Matcher<absl::StatusCode> code,
                  ::testing::Matcher<const std::string&> message)
      : code_(std::move(code)), message_(std::move(message)) {}

  template <typename T>
  bool MatchAndExplain(const T& value,
                       ::testing::MatchResultListener* listener) const {
    const absl::Status& status = GetStatus(value);
    *listener << "whose status is " << status;
    return code_.Matches(status.code()) &&
           message_.Matches(std::string(status.message()));
  }

  void DescribeTo(std::ostream* os) const {
    *os << "has a status code that ";
    code_.DescribeTo(os);
    *os << " and a message that ";
    message_.DescribeTo(os);
  }

  void DescribeNegationTo(std::ostream* os) const {
    *os << "does not have a status code that ";
    code_.DescribeTo(os);
    *os << " or a message that ";
    message_.DescribeTo(os);
  }

 private:
  ::testing::Matcher<absl::StatusCode> code_;
  ::testing::Matcher<const std::string&> message_;
};

template <typename StatusOrType>
class IsOkAndHoldsMatcherImpl
    : public ::testing::MatcherInterface<StatusOrType> {
 public:
  using ValueType = typename std::remove_cv_t<
      std::remove_reference_t<StatusOrType>>::value_type;

  template <typename InnerMatcher>
  explicit IsOkAndHoldsMatcherImpl(InnerMatcher&& inner)
      : inner_(::testing::SafeMatcherCast<const ValueType&>(
            std::forward<InnerMatcher>(inner))) {}

  void DescribeTo(std::ostream* os) const override {
    *os << "is OK and holds a value that ";
    inner_.DescribeTo(os);
  }

  void DescribeNegationTo(std::ostream* os) const override {
    *os << "is not OK or holds a value that ";
    inner_.DescribeNegationTo(os);
  }

  bool MatchAndExplain(
      StatusOrType actual,
      ::testing::MatchResultListener* listener) const override {
    if (!actual.ok()) {
      *listener << "whose status is " << actual.status();
      return false;
    }
    return inner_.MatchAndExplain(*actual, listener);
  }

 private:
  ::testing::Matcher<const ValueType&> inner_;
};

template <typename InnerMatcher>
class IsOkAndHoldsMatcher {
 public:
  explicit IsOkAndHoldsMatcher(InnerMatcher inner) : inner_(std::move(inner)) {}

  template <typename StatusOrType>
  operator ::testing::Matcher<StatusOrType>() const {  // NOLINT
    return ::testing::Matcher<StatusOrType>(
        new IsOkAndHoldsMatcherImpl<const StatusOrType&>(inner_));
  }

 private:
  InnerMatcher inner_;
};

}  // namespace internal

// Matches an OK absl::Status or absl::StatusOr<T>.
inline ::testing::PolymorphicMatcher<internal::StatusIsMatcher> IsOk() {
  return ::testing::MakePolymorphicMatcher(
      internal::StatusIsMatcher(absl::StatusCode::kOk, ::testing::_));
}

// Matches a Status or StatusOr whose code matches `code` and whose message
// matches `message` (anything when omitted).
inline ::testing::PolymorphicMatcher<internal::StatusIsMatcher> StatusIs(
    ::testing::Matcher<absl::StatusCode> code,
    ::testing::Matcher<const std::string&> message = ::testing::_) {
  return ::testing::MakePolymorphicMatcher(
      internal::StatusIsMatcher(std::move(code), std::move(message)));
}

// Matches an OK StatusOr<T> whose value matches `value`.
template <typename ValueMatcher>
internal::IsOkAndHoldsMatcher<ValueMatcher> IsOkAndHolds(ValueMatcher value) {
  return internal::IsOkAndHoldsMatcher<ValueMatcher>(std::move(value));
}

}  // namespace jobset::testing

#endif  // JOBSET_COMMON_STATUS_MATCHERS_H_
