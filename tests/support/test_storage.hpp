// tests/support/test_storage.hpp
//
// The storage the API server's integration suites run on, chosen per test process
// by KINFORMER_TEST_STORAGE: unset or "memory" = the memory Store, "etcd" = a real
// etcd that the process starts itself (tests/support/etcd_process.hpp) on first use.
// tests/{apiserver,http}/CMakeLists.txt register the cases tagged [any-storage] a
// second time with KINFORMER_TEST_STORAGE=etcd, so one suite runs on both storages
// without a copy.
//
// Contract
//   * on_test_storage(options) returns the options unchanged for memory. For etcd it
//     sets the endpoint and a key prefix of its own for each server, so servers of
//     one process do not see each other's objects. Options that name etcd endpoints
//     already (what an earlier call returned) come back unchanged: a server restarted
//     with them finds its objects. (A data_file with etcd is refused by
//     Server::start(): tests of the data file are the memory store's.)
//   * The etcd process is shared by the whole test process, its data directory on
//     /dev/shm where there is one: these suites test the API, not fsync (the etcd
//     storage's own tests keep etcd on disk), and the suites stay fast.
// Threading: thread-safe.
#pragma once

#include <string>

#include "apiserver/server.hpp"
#include "runtime/result.hpp"

namespace kinformer::testing {

/// "etcd" or "memory" (KINFORMER_TEST_STORAGE).
const std::string& test_storage();

/// `options` on the storage under test (see above). Errors: etcd did not start
/// (Errc::connection_failed, with etcd's log).
[[nodiscard]] Result<apiserver::ServerOptions> on_test_storage(apiserver::ServerOptions options);

}  // namespace kinformer::testing
