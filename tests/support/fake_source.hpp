// tests/support/fake_source.hpp
//
// FakeSource: the source actor tests and demos read from, after client-go's
// fake_controller_source.go: an apiserver::Store (the one implementation of the
// resourceVersion rules), the in-process StoreListWatch over its pods, and the
// FaultInjectingListWatch around that, behind one ListWatch with the conveniences
// tests need.
//
// Usage
//   auto source = std::make_shared<testing::FakeSource>();
//   source->add(testing::pod("foo", "0"));     // stored as RV 1, watchers get ADDED
//   source->fail_next_watch(testing::fault::expired());
//   options.source = source;                   // a Reflector or SharedInformer reads it
//   auto lists = source->list_requests();      // every ListOptions received, in order
//
// Contract
//   * The store starts empty at revision 0 and takes objects in any namespace
//     (StoreOptions::bootstrap_namespaces = false), so the n-th change is RV n.
//   * Changes go through the Store as an API client's writes do: the store sets
//     resourceVersion, uid and creationTimestamp; a modify keeps the stored status of
//     a kind with a status subresource (pods), and one that changes nothing makes no
//     event; add of a present key and modify of an absent one are refused (null).
//     DELETED carries the last state at the deletion's RV.
//   * The *_drop_watch variants change the state and the RV without telling any open
//     watch: only a later list or a watch from an older RV sees them (a lost event).
//     They assume one writer thread.
//   * reset_watch() forgets the history (Store::compact()) and closes every watch
//     cleanly: a re-watch from an RV behind the newest gets 410.
//   * Lists and watches serve one resource (pods unless options say otherwise), with
//     every rule and fault of StoreListWatch and FaultInjectingListWatch.
// Threading: every member may be called from any thread.
// Errors: the ListWatch ones (runtime/list_watch.hpp); never throws (beyond std::bad_alloc).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "apiserver/resources.hpp"
#include "apiserver/storage/store.hpp"
#include "apiserver/store_list_watch.hpp"
#include "runtime/list_watch.hpp"
#include "runtime/object.hpp"
#include "tests/support/fault_injecting_list_watch.hpp"

namespace kinformer::testing {

struct FakeSourceOptions {
  /// Changes kept for watches and exact lists at older RVs; older ones get 410.
  std::size_t history_limit = 1000;
  /// Where callbacks run; empty = at once on the calling thread.
  Executor executor;
  /// Serve watch-list (send_initial_events); false answers it like a server without
  /// the WatchList feature: Errc::server_error (HTTP 422).
  bool watch_list = true;
  /// The core/v1 resource served (its plural).
  std::string resource = "pods";
};

class FakeSource final : public ListWatch {
 public:
  explicit FakeSource(FakeSourceOptions options = {});
  ~FakeSource() override;
  FakeSource(const FakeSource&) = delete;
  FakeSource& operator=(const FakeSource&) = delete;

  // -- changes: each returns the object as stored (with its new RV), null if refused --

  /// Creates `object` and sends ADDED.
  ObjectPtr add(const ObjectPtr& object);
  /// Replaces the stored object of the same key by `object` and sends MODIFIED.
  ObjectPtr modify(const ObjectPtr& object);
  /// Deletes `key` ("namespace/name") and sends DELETED with its last state.
  ObjectPtr remove(std::string_view key);
  ObjectPtr add_drop_watch(const ObjectPtr& object);
  ObjectPtr modify_drop_watch(const ObjectPtr& object);
  ObjectPtr remove_drop_watch(std::string_view key);

  /// BOOKMARK at its position to every open watch that allows bookmarks.
  void bookmark();
  /// Forgets the history and closes every watch cleanly.
  void reset_watch();

  // -- faults (FaultInjectingListWatch) --

  void fail_next_list(Error error) { faults_->fail_next_list(std::move(error)); }
  void fail_next_continue(Error error) { faults_->fail_next_continue(std::move(error)); }
  void fail_next_watch(Error error) { faults_->fail_next_watch(std::move(error)); }
  void close_watches(Result<void> reason = {}) { faults_->close_watches(std::move(reason)); }
  void emit(std::vector<WatchEvent> events) { faults_->emit(std::move(events)); }
  void emit_malformed() { faults_->emit_malformed(); }

  // -- what happened --

  std::vector<ListOptions> list_requests() const { return faults_->list_requests(); }
  std::vector<WatchOptions> watch_requests() const { return faults_->watch_requests(); }
  std::size_t open_watch_count() const { return faults_->open_watch_count(); }
  /// The newest RV handed out ("0" before any change).
  std::string resource_version() const;
  /// Every stored object of the served resource, in key order.
  std::vector<ObjectPtr> objects() const;
  ObjectPtr get(std::string_view key) const;

  // -- the parts --

  apiserver::Store& store() { return *store_; }
  FaultInjectingListWatch& faults() { return *faults_; }

  // -- ListWatch --

  void list(const ListOptions& options, ListCallback done) override {
    faults_->list(options, std::move(done));
  }
  [[nodiscard]] std::unique_ptr<Watch> watch(const WatchOptions& options, EventsCallback on_events,
                                             ClosedCallback on_closed) override {
    return faults_->watch(options, std::move(on_events), std::move(on_closed));
  }
  std::string resource() const override { return type_ ? type_->plural : std::string(); }

 private:
  ObjectPtr write(const ObjectPtr& object, bool create);
  ObjectPtr erase(std::string_view key);
  template <class Change>
  ObjectPtr unseen(Change change);

  std::shared_ptr<apiserver::ResourceRegistry> registry_;  // outlives store_ (held by its aliases)
  std::shared_ptr<apiserver::Store> store_;
  const apiserver::ResourceType* type_ = nullptr;  // the served resource, in *registry_
  std::shared_ptr<apiserver::StoreListWatch> list_watch_;
  std::shared_ptr<FaultInjectingListWatch> faults_;
};

}  // namespace kinformer::testing
