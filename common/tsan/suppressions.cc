// The tsan suppressions of every tsan binary, compiled in (tsan reads them
// through __tsan_default_suppressions), so that `bazel test --config=tsan`
// needs no file path. Only reports that lie wholly inside an uninstrumented
// third-party library belong here (called_from_lib: accesses that a
// library's own calls to intercepted functions such as memmove make), each
// with the reason; a report in our code is a bug to fix, never suppressed.
extern "C" const char* __tsan_default_suppressions() {
  return
      // absl::Mutex's deadlock detector (on in Debian's Abseil) keeps its lock
      // graph under an internal absl::base_internal::SpinLock, all inside
      // libabsl_graphcycles_internal / libabsl_synchronization, neither
      // instrumented: tsan sees the graph's memmoves, not the spinlock.
      "called_from_lib:libabsl_graphcycles_internal.so\n"
      // gRPC hands buffers, slices, statuses and call objects between its
      // threads through its own lock-free queues, combiners and atomics
      // (completion queues, ExecCtx, the event engine), none instrumented.
      // tsan sees the libraries' intercepted memmoves, sendmsgs and frees on
      // either side of such a hand-over but not the hand-over itself.
      "called_from_lib:libgrpc.so\n"
      "called_from_lib:libgrpc++.so\n"
      "called_from_lib:libgpr.so\n"
      "called_from_lib:libupb.so\n"
      // absl::Status's reference-counted payloads are freed by the last
      // Unref, an atomic decrement inside the uninstrumented libabsl_status.
      "called_from_lib:libabsl_status.so\n"
      // A status's message and payloads live in absl::Cords: TryCancel on one
      // thread builds the CANCELLED status that a gRPC thread later copies out
      // (Cord::CopyToArraySlowPath's memcpy), handed over inside gRPC.
      "called_from_lib:libabsl_cord.so\n"
      // gRPC's threads build their error and peer strings with absl::StrAppend
      // and StrCat from statuses another thread made (a server's Shutdown
      // cancelling its calls), handed over inside gRPC: tsan sees only the
      // memcpy inside the uninstrumented libabsl_strings.
      "called_from_lib:libabsl_strings.so\n"
      // OpenSSL (under gRPC's TLS and auth/pki) keeps its own locks, atomics
      // and per-thread state, uninstrumented.
      "called_from_lib:libssl.so.3\n"
      "called_from_lib:libcrypto.so.3\n"
      // gRPC's callback API, inside grpcpp's headers: an operation's op set
      // and tag are filled by the thread that starts it (StartWrite, Finish,
      // from a reaction or our pump), completed and run by a gRPC thread,
      // and the call object holding them is destroyed after OnDone on yet
      // another; each hand-over is gRPC core's (the call batch, the executor
      // queue), uninstrumented, so tsan sees these accesses unordered. Only
      // gRPC's own op sets, tags and call object are named: our reactors'
      // state and OnDone stay checked.
      "race:grpc::internal::CallOpSet\n"
      "race:grpc::internal::CallbackWithSuccessTag\n"
      "race:ServerCallbackReaderWriterImpl::~ServerCallbackReaderWriterImpl\n"
      // gRPC's own threads (its executor, the TLS handshaker's) outlive a
      // test's last call and are joined by gRPC at exit, unseen by tsan.
      "thread:grpc_core::Thread::Thread\n";
}
