// bench/vs_client_go/stamped_writer.hpp
//
// StampedWriter: bench_vs_client_go's writer, in the bench's own process beside
// the embedded server, writing straight into its store (an HTTP client per write
// would be the bottleneck long before 10,000 writes/s on 2 cores).
//
// Contract
//   * create_*(): objects of about object_bytes of JSON each (the server adds uid,
//     creationTimestamp and resourceVersion), through Server::call(), unstamped,
//     in a namespace it creates first. Exits the process on a refused create: the
//     bench cannot go on.
//   * update_at_rate(): `count` updates of the configmaps cm-0 .. cm-(keys-1) in
//     turn, `rate` a second on a fixed schedule (late writes are not skipped).
//     Each sets the stamp annotation to CLOCK_REALTIME nanoseconds inside the
//     store's mutation, i.e. at its commit. Returns the rate achieved.
// Threading: one thread at a time.
#pragma once

#include <cstddef>
#include <string>

namespace kinformer::apiserver {
class Server;
}

namespace kinformer::bench {

class StampedWriter {
 public:
  StampedWriter(apiserver::Server& server, std::string stamp_key, std::size_t object_bytes);

  void create_namespace(const std::string& namespace_);
  void create_pods(const std::string& namespace_, std::size_t count);
  void create_configmaps(const std::string& namespace_, std::size_t count);
  double update_at_rate(const std::string& namespace_, std::size_t keys, std::size_t count, double rate);
  /// The JSON size of one object as created (before the server's fields).
  std::size_t object_bytes() const { return object_bytes_; }

 private:
  void create(const std::string& path, const std::string& body);

  apiserver::Server& server_;
  const std::string stamp_key_;
  const std::size_t object_bytes_;
};

}  // namespace kinformer::bench
