#include "runtime/indexer.hpp"

#include <pthread.h>

#include <cstdlib>
#include <mutex>
#include <shared_mutex>
#include <utility>

#include "runtime/store_core.hpp"

namespace kinformer {

std::vector<std::string> namespace_index_func(const Object& object) { return {std::string(object.namespace_())}; }

std::vector<std::string> labels_index_func(const Object& object) {
  std::vector<std::string> out;
  out.reserve(object.label_count());
  for (const Object::Entry& e : object.labels()) {
    std::string v;
    v.reserve(e.key.size() + 1 + e.value.size());
    v.append(e.key).append(1, '=').append(e.value);
    out.push_back(std::move(v));
  }
  return out;
}

namespace {

// std::shared_mutex on glibc prefers readers: with two readers back to back there
// is always one holding it, and bench_runtime saw the single writer (the
// Controller) fall from ~300 k to ~150 updates/s (median of 5 rounds). glibc's
// writer-preferring kind queues new readers behind a waiting writer. Readers must
// not take it recursively (a nested read behind a waiting writer would deadlock);
// no Indexer method does.
class WriterPreferringLock {
 public:
  WriterPreferringLock() {
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    if (pthread_rwlock_init(&lock_, &attr) != 0) std::abort();
    pthread_rwlockattr_destroy(&attr);
  }
  ~WriterPreferringLock() { pthread_rwlock_destroy(&lock_); }
  WriterPreferringLock(const WriterPreferringLock&) = delete;
  WriterPreferringLock& operator=(const WriterPreferringLock&) = delete;

  void lock() noexcept { pthread_rwlock_wrlock(&lock_); }
  void unlock() noexcept { pthread_rwlock_unlock(&lock_); }
  void lock_shared() noexcept { pthread_rwlock_rdlock(&lock_); }
  void unlock_shared() noexcept { pthread_rwlock_unlock(&lock_); }

 private:
  pthread_rwlock_t lock_;
};

}  // namespace

// Readers take mu_ shared, the writer takes it exclusive only to mutate. The writer
// is the only mutator, so it reads `core` without the lock, and builds whole new
// structures (replace, add_indexers) before taking it: readers wait for a swap,
// never for a rebuild.
struct Indexer::State {
  explicit State(Indexers indexers) : core(std::move(indexers)) {}
  mutable WriterPreferringLock mu;
  detail::StoreCore core;  // written under mu exclusive; read under mu shared (or by the writer)
};

Indexer::Indexer(Indexers indexers) : state_(std::make_unique<State>(std::move(indexers))) {}

Indexer::~Indexer() = default;

// -- the writer --

void Indexer::add(ObjectPtr object) { update(std::move(object)); }

void Indexer::update(ObjectPtr object) {
  std::unique_lock lock(state_->mu);
  state_->core.upsert(std::move(object));
}

void Indexer::delete_object(const Object& object) { delete_key(object.key()); }

void Indexer::delete_key(std::string_view key) {
  if (!state_->core.get_by_key(key)) return;  // a missing key costs readers nothing
  std::unique_lock lock(state_->mu);
  state_->core.erase(key);
}

void Indexer::replace(std::vector<ObjectPtr> list) {
  detail::StoreCore fresh = state_->core.empty_like();
  fresh.replace(std::move(list));
  {
    std::unique_lock lock(state_->mu);
    std::swap(state_->core, fresh);
  }
  // `fresh` now holds the old state: released here, outside the lock.
}

Result<void> Indexer::add_indexers(Indexers indexers) {
  auto built = state_->core.build_indexes(std::move(indexers));
  if (!built) return std::move(built).error();
  std::unique_lock lock(state_->mu);
  state_->core.install_indexes(std::move(built).value());
  return {};
}

// -- readers --

ObjectPtr Indexer::get_by_key(std::string_view key) const {
  std::shared_lock lock(state_->mu);
  return state_->core.get_by_key(key);
}

std::vector<ObjectPtr> Indexer::list() const {
  std::shared_lock lock(state_->mu);
  return state_->core.list();
}

std::vector<std::string> Indexer::list_keys() const {
  std::shared_lock lock(state_->mu);
  return state_->core.list_keys();
}

std::size_t Indexer::size() const {
  std::shared_lock lock(state_->mu);
  return state_->core.size();
}

Result<std::vector<ObjectPtr>> Indexer::index(std::string_view name, const Object& object) const {
  std::shared_lock lock(state_->mu);
  return state_->core.index(name, object);
}

Result<std::vector<std::string>> Indexer::index_keys(std::string_view name, std::string_view value) const {
  std::shared_lock lock(state_->mu);
  return state_->core.index_keys(name, value);
}

Result<std::vector<ObjectPtr>> Indexer::by_index(std::string_view name, std::string_view value) const {
  std::shared_lock lock(state_->mu);
  return state_->core.by_index(name, value);
}

std::vector<std::string> Indexer::list_index_func_values(std::string_view name) const {
  std::shared_lock lock(state_->mu);
  return state_->core.list_index_func_values(name);
}

}  // namespace kinformer
